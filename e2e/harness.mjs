// The end-to-end harness: a simulated terminal (`comptoir simulator`), the
// kiosk in browser mode (`comptoir serve`) on a fresh data directory, and
// Debian's Chromium driven by playwright-core. Each test gets its own three.
//
// COMPTOIR_BIN names the binary (scripts/test builds it with the frontend
// embedded); CHROMIUM the browser (default /usr/bin/chromium).

import assert from "node:assert/strict";
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, "..");
export const artifacts = join(root, "build", "e2e");

// The tests' fiscal signing keys go to a folder of their own: run as root
// on Linux, comptoir would keep them under /var/lib.
if (!process.env.COMPTOIR_FISCAL_KEYS) {
  const keys = mkdtempSync(join(tmpdir(), "comptoir-e2e-keys-"));
  process.env.COMPTOIR_FISCAL_KEYS = keys;
  process.on("exit", () => rmSync(keys, { recursive: true, force: true }));
}

let builtBinary;

/** cloudURL reads the simulated cloud's own address from what it printed. */
async function cloudURL(proc) {
  for (let i = 0; i < 100; i++) {
    const m = proc.out().match(/Simulated cloud at (http:\/\/\S+?) /);
    if (m) return m[1];
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the simulated cloud never said its address");
}

/** binary returns the comptoir binary, building it once if not given. */
export function binary() {
  if (process.env.COMPTOIR_BIN) return process.env.COMPTOIR_BIN;
  if (!builtBinary) {
    builtBinary = join(mkdtempSync(join(tmpdir(), "comptoir-e2e-bin-")), "comptoir");
    execFileSync("go", ["build", "-o", builtBinary, "."], { cwd: root, stdio: "inherit" });
  }
  return builtBinary;
}

/** start runs the binary and resolves with the URL its first line announces. */
function start(args, pattern, env = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(binary(), args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${args[0]} did not start in time:\n${out}\n${err}`));
    }, 20000);
    child.stdout.on("data", (d) => {
      out += d;
      const m = out.match(pattern);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1], logs: () => err, out: () => out });
      }
    });
    child.stderr.on("data", (d) => (err += d));
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code}:\n${out}\n${err}`));
    });
  });
}

function stop(proc) {
  if (!proc || proc.child.exitCode !== null || proc.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.child.once("exit", resolve);
    proc.child.kill("SIGTERM");
    setTimeout(() => proc.child.kill("SIGKILL"), 5000).unref();
  });
}

/** STAFF_PIN is the staff PIN setup gives a kiosk, as an installer would (`comptoir pin`). */
export const STAFF_PIN = "2468";

/**
 * setup starts a simulator, a kiosk on it, and a browser page on the kiosk.
 * Options: timescale (the simulator's), viewport, terminal ("sim" or a
 * dead address for the unreachable case), dataDir (the kiosk's data
 * directory, default a fresh one), keepDataDir (leave it in place at the
 * end: a mount point, say, that its test removes itself), serveArgs (more
 * flags for `comptoir serve`: --client-timeout, --request-open, ...) and pin
 * (the staff PIN set before the kiosk starts, default STAFF_PIN; null: none,
 * the first run, when the kiosk takes no order until staff set one) and
 * cloud (true: a simulated provider cloud, `comptoir cloudsim`, set up as
 * the kiosk's cloud for payment links; env.cloudBase is its address).
 */
export async function setup(t, opts = {}) {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), "comptoir-e2e-data-"));
  if (opts.pin !== null) {
    execFileSync(binary(), ["pin", "--data-dir", dataDir], { input: `${opts.pin ?? STAFF_PIN}\n`, stdio: ["pipe", "ignore", "inherit"] });
  }
  const timescale = String(opts.timescale ?? 0.1);
  let sim;
  let cloud;
  let simBase;
  const kioskEnv = {};
  if (opts.cloud) {
    // The provider's cloud, whose terminal is also the kiosk's terminal on
    // the LAN: the provider knows every transaction of its terminals (the
    // second witness of an approval over the LAN reads them).
    const key = "sk_e2e_" + Math.random().toString(36).slice(2);
    const serial = "SIM-E2E-1";
    cloud = await start(
      ["cloudsim", "--addr", "127.0.0.1:0", "--key", key, "--serial", serial, "--lan", "--timescale", timescale],
      /Terminal SIM-E2E-1 on the LAN: (http:\/\/\S+\/localapi\/v4)/,
    );
    cloud.lan = cloud.url;
    cloud.url = cloud.lan && (await cloudURL(cloud));
    execFileSync(binary(), ["settings", "--data-dir", dataDir, "set", "cloud.url", JSON.stringify(cloud.url)], { stdio: ["ignore", "ignore", "inherit"] });
    kioskEnv.COMPTOIR_CLOUD_KEY = key;
    simBase = `${cloud.url}/sim/terminals/${serial}`;
  } else {
    sim = await start(["simulator", "--addr", "127.0.0.1:0", "--timescale", timescale], /Simulated terminal at (http:\/\/\S+\/localapi\/v4)/);
    simBase = sim.url.replace(/\/localapi\/v4$/, "");
  }
  const terminal = opts.terminal ?? (cloud ? cloud.lan : sim.url);
  const startKiosk = () =>
    start(
      ["serve", "--addr", "127.0.0.1:0", "--terminal", terminal, "--data-dir", dataDir, ...(opts.serveArgs ?? [])],
      /Comptoir at (http:\/\/\S+\/)/,
      kioskEnv,
    );
  let kiosk = await startKiosk();
  let earlierLogs = "";
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1080, height: 1920 } });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  // A Content-Security-Policy violation is only a console message: count it too.
  page.on("console", (m) => {
    if (m.type() === "error" && /Content.Security.Policy/i.test(m.text())) consoleErrors.push(m.text());
  });
  await page.goto(kiosk.url);

  const env = {
    page,
    kioskURL: kiosk.url,
    simBase,
    cloudBase: cloud?.url,
    dataDir,
    consoleErrors,
    /** kioskLogs is what the running kiosk wrote on stderr so far. */
    kioskLogs: () => kiosk.logs(),
    kioskPid: () => kiosk.child.pid,
    /**
     * stopKiosk stops the kiosk (SIGTERM) and waits for it to exit. The page
     * leaves it first: an open event stream holds serve's shutdown for 5 s.
     */
    async stopKiosk() {
      await page.goto("about:blank").catch(() => {});
      await stop(kiosk);
    },
    /**
     * startKiosk starts the kiosk again on the same data directory and
     * terminal, and opens it in the page; serveArgs, when given, replace
     * setup's.
     */
    async startKiosk(serveArgs) {
      await env.stopKiosk();
      earlierLogs += kiosk.logs() + "--- the kiosk restarted ---\n";
      if (serveArgs) opts.serveArgs = serveArgs;
      kiosk = await startKiosk();
      env.kioskURL = kiosk.url;
      await page.goto(kiosk.url);
    },
    /** sim calls the simulator's control API. */
    async sim(path, body) {
      const res = await fetch(simBase + path, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
      return res.json();
    },
    ledger() {
      return env.sim("/sim/ledger");
    },
    /** waitFor polls the simulator's state until cond holds. */
    async waitForSim(cond, what, timeout = 15000) {
      const end = Date.now() + timeout;
      for (;;) {
        const state = await env.sim("/sim/state");
        if (cond(state)) return state;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(state)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
    async screenshot(name) {
      mkdirSync(artifacts, { recursive: true });
      await page.screenshot({ path: join(artifacts, `${name}.png`) });
    },
  };
  t.after(async () => {
    await browser.close().catch(() => {});
    await stop(kiosk);
    if (sim) await stop(sim);
    await stop(cloud);
    // What the kiosk and the simulated terminal said, to read after a
    // failure (build/e2e/logs/, one pair of files per test).
    const logs = join(artifacts, "logs");
    mkdirSync(logs, { recursive: true });
    const base = join(logs, t.name.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 120));
    writeFileSync(`${base}.kiosk.log`, earlierLogs + kiosk.logs());
    writeFileSync(`${base}.terminal.log`, (sim ?? cloud).logs());
    if (!opts.keepDataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return env;
}

// The embedded demo menu's categories, for the products the tests order.
const demoCategory = {
  croissant: "viennoiseries",
  "jambon-beurre": "sales",
  "croque-monsieur": "sales",
  "eclair-cafe": "patisseries",
  "tarte-citron": "patisseries",
  "cafe-creme": "boissons",
  "chocolat-chaud": "boissons",
};

/**
 * order starts in a language (default English), says where the order is
 * eaten (default eaten in), puts products of the demo menu (id → quantity)
 * in the cart and opens the cart.
 */
export async function order(env, items, lang = "en", dining = "eat_in") {
  const { page } = env;
  const tid = (id) => `[data-testid="${id}"]`;
  await page.locator(tid(`start-${lang}`)).click();
  await page.locator(tid(`dining-${dining}`)).click();
  await page.locator(tid("screen-menu")).waitFor();
  for (const [id, qty] of Object.entries(items)) {
    if (!demoCategory[id]) throw new Error(`order: ${id} is not a product the harness knows`);
    await page.locator(tid(`category-${demoCategory[id]}`)).click();
    await page.locator(tid(`product-${id}`)).click();
    await page.locator(tid("product-detail")).waitFor();
    for (let i = 1; i < qty; i++) await page.locator(tid("qty-plus")).click();
    await page.locator(tid("add-to-cart")).click();
  }
  await page.locator(tid("open-cart")).click();
  await page.locator(tid("screen-cart")).waitFor();
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** axe runs axe-core on the page and returns its WCAG 2.1 A/AA violations, one line each. */
export async function axe(page) {
  // Colours are judged once transitions end (a dialog fading in is not
  // low contrast).
  await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== "running" || a.effect?.getTiming().iterations === Infinity));
  // Evaluated through the DevTools protocol, not added as an inline
  // <script>: the kiosk's Content-Security-Policy forbids inline scripts.
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const r = await axe.run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] } });
    return r.violations.map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`);
  });
  return violations;
}

// ---- Staff mode ----

const tid = (id) => `[data-testid="${id}"]`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * tapCorner taps the hidden staff corner n times, pause ms apart. The taps
 * go straight to the mouse at the corner's centre, found once: a locator's
 * click waits for actionability each time, which on a loaded machine can
 * spread five taps over more than the gesture's three seconds.
 */
export async function tapCorner(env, n, pause = 0) {
  const box = await env.page.locator(tid("staff-corner")).boundingBox();
  assert.ok(box, "the staff corner is not on screen");
  for (let i = 0; i < n; i++) {
    if (i && pause) await sleep(pause);
    await env.page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  }
}

/** openPad opens the PIN pad the way staff do: five taps on the corner. */
export async function openPad(env) {
  await tapCorner(env, 5);
  await env.page.locator(tid("pin-pad")).waitFor();
}

/** typePin enters a PIN on the pad's keys and presses OK. */
export async function typePin(env, pin) {
  for (const d of pin) await env.page.locator(tid(`pin-key-${d}`)).click();
  await env.page.locator(tid("pin-ok")).click();
}

/**
 * enterStaff opens the staff screens with the PIN the harness set, then
 * switches them to English.
 */
export async function enterStaff(env) {
  const { page } = env;
  await openPad(env);
  await typePin(env, STAFF_PIN);
  await page.locator(tid("staff-shell")).waitFor();
  await page.locator(tid("staff-lang-en")).click();
}

/** openTab shows a staff tab. */
export async function openTab(env, tab) {
  await env.page.locator(tid(`staff-tab-${tab}`)).click();
  await env.page.locator(`#staff-panel[data-tab="${tab}"]`).waitFor();
}

/** confirmYes waits for the confirmation dialog, checks its amount, and says yes. */
export async function confirmYes(env, amount) {
  const { page } = env;
  await page.locator(tid("confirm-dialog")).waitFor();
  if (amount) assert.match(await page.locator(tid("confirm-amount")).innerText(), amount);
  await page.locator(tid("confirm-yes")).click();
  await page.locator(tid("confirm-dialog")).waitFor({ state: "detached" });
}
