// Start-up in browser mode: process start of `comptoir serve` to the
// welcome screen interactive (every control on it enabled: the terminal is
// connected and recovery is done) in Debian's Chromium, driven with
// playwright-core (e2e/node_modules). Each run uses a fresh data directory
// (the journal is created: a first start) and a fresh browser page.
//
//   warm: Chromium already running with a blank page; t0 = spawn of serve.
//   cold: t0 = spawn of serve and launch of Chromium together (a kiosk PC
//         booting into its browser).
// The end time is read inside the page (performance.timeOrigin + now(), the
// same wall clock as Node's) at the animation frame where the controls are
// enabled: Start, or eat in and take away when the shop asks where the
// order is eaten, and a button per language. The screen is found by its
// test id, its controls by what they are (buttons), so a new way to start
// does not break the measure.
//
//   node scripts/bench/startup-browser.mjs BINARY OUT.json [RUNS]
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const { chromium } = createRequire(join(root, "e2e", "package.json"))("playwright-core");
const [bin, out, runsArg] = process.argv.slice(2);
const runs = Number(runsArg || 10);
const now = () => performance.timeOrigin + performance.now();
const chromiumArgs = [
  "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];

function start(args, pattern) {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    let outText = "";
    child.stderr.resume();
    const timer = setTimeout(() => { child.kill("SIGKILL"); reject(new Error(`${args[0]} did not start`)); }, 20000);
    child.stdout.on("data", (d) => {
      outText += d;
      const m = outText.match(pattern);
      if (m) { clearTimeout(timer); resolve({ child, url: m[1], at: now() }); }
    });
    child.on("exit", (c) => { clearTimeout(timer); reject(new Error(`${args[0]} exited ${c}: ${outText}`)); });
  });
}

function stop(p) {
  return new Promise((resolve) => {
    if (p.child.exitCode !== null) return resolve();
    p.child.once("exit", resolve);
    p.child.kill("SIGTERM");
    setTimeout(() => p.child.kill("SIGKILL"), 5000).unref();
  });
}

async function interactive(page, url) {
  await page.goto(url);
  const shown = await (await page.waitForFunction(() => {
    const w = document.querySelector('[data-testid="screen-welcome"]');
    return w ? performance.timeOrigin + performance.now() : false;
  }, null, { polling: "raf", timeout: 20000 })).jsonValue();
  const nav = await page.evaluate(() => {
    const n = performance.getEntriesByType("navigation")[0];
    return { request: performance.timeOrigin + n.requestStart, dcl: performance.timeOrigin + n.domContentLoadedEventEnd };
  });
  const handle = await page.waitForFunction(() => {
    const buttons = [...(document.querySelector('[data-testid="screen-welcome"]')?.querySelectorAll("button") ?? [])];
    return buttons.length > 0 && buttons.every((b) => !b.disabled) ? performance.timeOrigin + performance.now() : false;
  }, null, { polling: "raf", timeout: 20000 });
  return { ...nav, shown, enabled: await handle.jsonValue() };
}

const sim = await start(["simulator", "--addr", "127.0.0.1:0", "--timescale", "0.001"], /Simulated terminal at (http:\/\/\S+\/localapi\/v4)/);
const result = { runs, warm: [], cold: [], chromiumLaunchMs: [] };
try {
  for (const mode of ["warm", "cold"]) {
    let browser;
    if (mode === "warm") browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: chromiumArgs });
    for (let i = 0; i < runs; i++) {
      const dataDir = mkdtempSync(join(tmpdir(), "comptoir-bench-start-"));
      // The staff PIN, as an installer sets it (untimed): without one the kiosk takes no order.
      execFileSync(bin, ["pin", "--data-dir", dataDir], { input: "2468\n", stdio: ["pipe", "ignore", "inherit"] });
      // warm: the page exists before t0 (opening one is the browser's cost).
      let context, page;
      if (mode === "warm") {
        context = await browser.newContext({ viewport: { width: 1080, height: 1920 } });
        page = await context.newPage();
      }
      const t0 = now();
      const servePromise = start(["serve", "--addr", "127.0.0.1:0", "--terminal", sim.url, "--data-dir", dataDir], /Comptoir at (http:\/\/\S+\/)/);
      if (mode === "cold") {
        browser = await chromium.launch({ executablePath: process.env.CHROMIUM || "/usr/bin/chromium", args: chromiumArgs });
        result.chromiumLaunchMs.push(now() - t0);
      }
      const serve = await servePromise;
      if (mode === "cold") {
        context = await browser.newContext({ viewport: { width: 1080, height: 1920 } });
        page = await context.newPage();
      }
      const t = await interactive(page, serve.url);
      result[mode].push({
        listeningMs: serve.at - t0, requestMs: t.request - t0, domContentLoadedMs: t.dcl - t0,
        welcomeShownMs: t.shown - t0, interactiveMs: t.enabled - t0,
      });
      await context.close();
      if (mode === "cold") { await browser.close(); browser = undefined; }
      await stop(serve);
      rmSync(dataDir, { recursive: true, force: true });
    }
    if (browser) await browser.close();
  }
} finally {
  await stop(sim);
}
writeFileSync(out, JSON.stringify(result, null, 1));
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.error(`startup-browser: warm median ${med(result.warm.map((r) => r.interactiveMs)).toFixed(0)} ms, cold median ${med(result.cold.map((r) => r.interactiveMs)).toFixed(0)} ms`);
