// End-to-end: the restaurant's screens. A purchase at the kiosk appears on
// the kitchen screen (/kitchen), a cook bumps it ready, and the
// order-ready board (/board) shows its number ready.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setup, binary, order, artifacts } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;

test("a purchase appears on the kitchen screen, is bumped, and shows ready on the board", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "comptoir-e2e-data-"));
  execFileSync(binary(), ["settings", "--data-dir", dataDir, "set", "kiosk.number_prefix", '"A"'], { stdio: ["ignore", "ignore", "inherit"] });
  const env = await setup(t, { dataDir });
  const ctx = env.page.context();
  const kitchen = await ctx.newPage();
  const board = await ctx.newPage();
  const errors = [];
  for (const p of [kitchen, board]) {
    p.on("pageerror", (e) => errors.push(String(e)));
    p.on("console", (m) => m.type() === "error" && /Content.Security.Policy/i.test(m.text()) && errors.push(m.text()));
  }
  await kitchen.setViewportSize({ width: 1280, height: 800 });
  await board.setViewportSize({ width: 1920, height: 1080 });
  await kitchen.goto(new URL("/kitchen?lang=en", env.kioskURL).href);
  await board.goto(new URL("/board?lang=en", env.kioskURL).href);
  await kitchen.getByText("No order to prepare").waitFor();

  await order(env, { croissant: 2 }, "en", "take_away");
  await env.page.locator(tid("go-pay")).click();
  await env.page.locator(tid("screen-payment-choice")).waitFor();
  await env.page.locator(tid("pay-card")).click();
  await env.page.locator(tid("screen-approved")).waitFor({ timeout: 20000 });
  const number = (await env.page.locator(tid("order-number")).innerText()).trim();
  assert.match(number, /^A\d+$/, "the kiosk's prefix is on the screen");

  const ticket = kitchen.locator(`article[data-number="${number}"]`);
  await ticket.waitFor({ timeout: 10000 });
  assert.match(await ticket.innerText(), /2×\s*Croissant/);
  assert.match(await ticket.innerText(), /Take away/);
  await board.locator(".preparing li", { hasText: number }).waitFor();
  mkdirSync(artifacts, { recursive: true });
  await kitchen.screenshot({ path: join(artifacts, "site-kitchen.png") });

  await kitchen.getByRole("button", { name: `Ready ${number}` }).click();
  await ticket.waitFor({ state: "detached" });
  await kitchen.getByRole("button", { name: `Recall ${number}` }).waitFor();
  await board.locator(".ready li", { hasText: number }).waitFor({ timeout: 10000 });
  assert.equal(await board.locator(".preparing li", { hasText: number }).count(), 0);
  await board.screenshot({ path: join(artifacts, "site-board.png") });
  assert.deepEqual(errors, []);
});
