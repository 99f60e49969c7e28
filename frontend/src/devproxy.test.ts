// @vitest-environment node
//
// `npm run dev` passes /api and /media to a running `comptoir serve --demo`
// (devproxy.ts). Here a plain HTTP server stands in for it, refusing as
// comptoir serve does any Origin that is not its own, and the Vite dev
// server runs with the project's config.

import { createServer as createHTTPServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { createServer, type ViteDevServer } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { proxiedOrigin } from "../devproxy";

describe("proxiedOrigin", () => {
  const target = "http://127.0.0.1:8080";
  it("gives the backend's origin to the dev server's own page", () => {
    expect(proxiedOrigin("http://localhost:5173", "localhost:5173", target)).toBe("http://127.0.0.1:8080");
    expect(proxiedOrigin("http://LOCALHOST:5173", "localhost:5173", target)).toBe("http://127.0.0.1:8080");
  });

  it("passes any other origin as it is, for the backend to refuse", () => {
    expect(proxiedOrigin("http://evil.example", "localhost:5173", target)).toBe("http://evil.example");
    expect(proxiedOrigin("http://localhost:5174", "localhost:5173", target)).toBe("http://localhost:5174");
    expect(proxiedOrigin("null", "localhost:5173", target)).toBe("null");
    expect(proxiedOrigin("file://localhost:5173", "localhost:5173", target)).toBe("file://localhost:5173");
  });

  it("adds no Origin where there was none", () => {
    expect(proxiedOrigin(undefined, "localhost:5173", target)).toBeUndefined();
  });
});

describe("the dev server", () => {
  let backend: Server;
  let vite: ViteDevServer;
  let dev: string;
  const seen: { url?: string; host?: string; origin?: string }[] = [];

  beforeAll(async () => {
    backend = createHTTPServer((req, res) => {
      seen.push({ url: req.url, host: req.headers.host, origin: req.headers.origin });
      const origin = req.headers.origin;
      if (origin && new URL(origin).host !== req.headers.host) {
        res.writeHead(403, { "Content-Type": "application/json" }).end(`{"error":"cross-origin requests are not allowed"}`);
        return;
      }
      res.writeHead(200, { "Content-Type": "application/json" }).end(JSON.stringify({ path: req.url }));
    });
    await new Promise<void>((resolve) => backend.listen(0, "127.0.0.1", resolve));
    process.env.COMPTOIR_DEV_SERVER = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
    const root = join(import.meta.dirname, "..");
    vite = await createServer({ root, configFile: join(root, "vite.config.ts"), logLevel: "silent", server: { port: 0, host: "127.0.0.1" } });
    await vite.listen();
    dev = `http://127.0.0.1:${(vite.httpServer!.address() as AddressInfo).port}`;
  }, 120_000);

  afterAll(async () => {
    delete process.env.COMPTOIR_DEV_SERVER;
    await vite?.close();
    await new Promise((resolve) => backend?.close(resolve));
  });

  it("passes the API and the pictures to the backend, the page's own calls accepted", async () => {
    const api = await fetch(`${dev}/api/Start`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: dev },
      body: JSON.stringify(["fr"]),
    });
    expect(api.status).toBe(200);
    expect(await api.json()).toEqual({ path: "/api/Start" });
    const media = await fetch(`${dev}/media/croissant.jpg`);
    expect(await media.json()).toEqual({ path: "/media/croissant.jpg" });
    const backendHost = new URL(process.env.COMPTOIR_DEV_SERVER!).host;
    expect(seen.at(-2)).toEqual({ url: "/api/Start", host: backendHost, origin: process.env.COMPTOIR_DEV_SERVER });
  });

  it("keeps another site's page refused", async () => {
    const res = await fetch(`${dev}/api/Start`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: "http://evil.example" },
      body: "[]",
    });
    expect(res.status).toBe(403);
    expect(seen.at(-1)?.origin).toBe("http://evil.example");
  });

  it("under `wails dev` (mode desktop) passes nothing on: a picture is not found, and Wails serves it", async () => {
    const root = join(import.meta.dirname, "..");
    const desktop = await createServer({
      root,
      configFile: join(root, "vite.config.ts"),
      mode: "desktop",
      logLevel: "silent",
      server: { port: 0, host: "127.0.0.1" },
    });
    try {
      await desktop.listen();
      const before = seen.length;
      const media = await fetch(`http://127.0.0.1:${(desktop.httpServer!.address() as AddressInfo).port}/media/croissant.jpg`);
      expect(media.status).toBe(404);
      expect(seen.length).toBe(before);
    } finally {
      await desktop.close();
    }
  }, 120_000);

  it("serves the UI itself, not the backend's", async () => {
    const before = seen.length;
    const page = await fetch(`${dev}/`);
    expect(await page.text()).toContain("/src/main.ts");
    expect(seen.length).toBe(before);
  });
});
