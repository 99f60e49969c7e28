// @vitest-environment node
//
// The customer bundle's budget: a production build of this tree (the
// project's own Vite config, into a temporary folder), measured the way
// `make bench` reports it (scripts/bundle.mjs): what the first screen loads,
// and so everything a customer's order runs on, gzipped, under 60 KB. Staff
// mode and the QR code library load when first needed, outside it.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { budgetBytes, customerBundle, type CustomerBundle } from "../scripts/bundle.mjs";

const root = join(import.meta.dirname, "..");
const out = mkdtempSync(join(tmpdir(), "comptoir-bundle-"));
let bundle: CustomerBundle;

const text = (files: { file: string }[]) => files.map((f) => readFileSync(join(out, f.file), "utf8")).join("\n");

beforeAll(async () => {
  // Vitest runs with NODE_ENV=test, and Vite and Svelte would build for
  // development: the budget is about the build that ships.
  const env = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({
      root,
      configFile: join(root, "vite.config.ts"),
      mode: "production",
      logLevel: "warn",
      build: { outDir: out, emptyOutDir: true },
    });
  } finally {
    process.env.NODE_ENV = env;
  }
  bundle = customerBundle(out);
}, 300_000);

afterAll(() => rmSync(out, { recursive: true, force: true }));

describe("the customer bundle", () => {
  it("is under 60 KB gzipped", () => {
    expect(budgetBytes).toBe(60 * 1024);
    const list = bundle.files.map((f) => `${f.file} ${f.gzip}`).join(", ");
    expect(bundle.gzip, `customer bundle: ${list}`).toBeLessThan(budgetBytes);
  });

  it("holds the customer's screens and the way into staff mode, and is a production build", () => {
    expect(bundle.files.map((f) => f.file)).toContain("index.html");
    expect(bundle.files.some((f) => f.file.endsWith(".js"))).toBe(true);
    expect(bundle.files.some((f) => f.file.endsWith(".css"))).toBe(true);
    const js = text(bundle.files);
    for (const id of ["screen-welcome", "screen-menu", "screen-cart", "screen-paying", "screen-approved", "staff-corner"]) {
      expect(js.includes(id), `${id} in the customer bundle`).toBe(true);
    }
    // A development build names each component's file (and weighs more).
    expect(js.includes("App.svelte"), "a development build").toBe(false);
  });

  it("leaves staff mode and the QR code library to load when first needed", () => {
    const js = text(bundle.files);
    const later = text(bundle.later);
    // The PIN pad, a staff screen, staff mode's words, the QR encoder.
    for (const marker of ["pin-pad", "staff-shell", "Enter the staff PIN", "too big to be stored in a QR Code"]) {
      expect(js.includes(marker), `${marker} in the customer bundle`).toBe(false);
      expect(later.includes(marker), `${marker} in a chunk loaded later`).toBe(true);
    }
  });
});
