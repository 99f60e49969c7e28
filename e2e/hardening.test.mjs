// End-to-end: the kiosk's hardening. A full disk under the journal, a
// customer trying to leave the app, corrupt settings, a data directory it
// may not write, a second process on the same directory. Browser mode
// against the simulated terminal, as in kiosk.test.mjs.
//
// Some cases need root (tmpfs mounts, running the binary as `nobody`): as
// another user they skip, saying why. CI runs them as root.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setup, binary, root, order, STAFF_PIN } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;
const screen = (env, name, timeout = 20000) => env.page.locator(tid(`screen-${name}`)).waitFor({ timeout });
const debits = (ledger) => ledger.filter((l) => l.kind === "debit");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const isRoot = process.getuid?.() === 0;

// The embedded demo menu: a croissant is 1,30 €, a café crème 3,20 €.

/** payByCard goes from the cart to the payment choice and picks the card. */
async function payByCard(env) {
  const { page } = env;
  await page.locator(tid("go-pay")).click();
  await screen(env, "payment-choice");
  await page.locator(tid("pay-card")).click();
}

/** run runs the binary to completion (bounded) and returns its status and output. */
function run(args, { asNobody = false, timeout = 20000 } = {}) {
  const cmd = asNobody ? "setpriv" : binary();
  const argv = asNobody ? ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary(), ...args] : args;
  const r = spawnSync(cmd, argv, { encoding: "utf8", timeout, killSignal: "SIGKILL" });
  if (r.error && r.error.code !== "ETIMEDOUT") throw r.error;
  return { status: r.status, signal: r.signal, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

/** journalAttempts lists the journal's attempts with `comptoir attempts` (the kiosk must be stopped). */
function journalAttempts(dataDir, open = false) {
  const out = execFileSync(binary(), ["attempts", "--data-dir", dataDir, ...(open ? ["--open"] : [])], { encoding: "utf8" });
  return JSON.parse(out);
}

/** mountTmpfs mounts a tmpfs on a fresh directory, or says why it cannot. */
function mountTmpfs(options) {
  if (!isRoot) return { skip: "needs root to mount a tmpfs (CI runs the end-to-end tests as root)" };
  const dir = mkdtempSync(join(tmpdir(), "comptoir-e2e-mnt-"));
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", options, "tmpfs", dir], { stdio: "pipe" });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    return { skip: `cannot mount a tmpfs here (${String(e.stderr || e.message).trim()})` };
  }
  const unmount = () => {
    try {
      execFileSync("umount", [dir], { stdio: "pipe" });
    } catch {
      // Still busy (a process that did not exit): detach it now, freed at its end.
      execFileSync("umount", ["-l", dir], { stdio: "pipe" });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return { dir, unmount };
}

/** fill writes to path until its filesystem refuses with ENOSPC. */
function fill(path) {
  const fd = openSync(path, "w");
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
      const chunk = Buffer.alloc(size, 0x5a);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch (e) {
          if (e.code === "ENOSPC") break;
          throw e;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** message reads one English UI string from the frontend's catalogue. */
function message(key) {
  const src = readFileSync(join(root, "frontend", "src", "lib", "i18n", "en.ts"), "utf8");
  const m = src.match(new RegExp(`"${key.replace(/\./g, "\\.")}":\\s*"((?:[^"\\\\]|\\\\.)*)"`));
  assert.ok(m, `no English text for ${key} in frontend/src/lib/i18n/en.ts`);
  return JSON.parse(`"${m[1]}"`);
}

// ---------------------------------------------------------------------------
// a. The journal on a full disk.

test("full disk: a clear error, the payment not started, nothing lost", async (t) => {
  const mnt = mountTmpfs("size=6m,mode=0700");
  if (mnt.skip) return t.skip(mnt.skip);
  let env;
  try {
    env = await setup(t, { dataDir: mnt.dir, keepDataDir: true });
  } catch (e) {
    mnt.unmount();
    throw e;
  }
  // Registered after setup's: the kiosk has stopped when this runs.
  t.after(mnt.unmount);
  const { page } = env;
  const filler = join(mnt.dir, "filler");

  // A first order, paid while the disk has room.
  await order(env, { croissant: 1 });
  await payByCard(env);
  await screen(env, "approved");
  const first = (await page.locator(tid("order-number")).innerText()).trim();
  await page.locator(tid("finish")).click();
  await screen(env, "welcome");
  const before = await env.sim("/sim/state");
  assert.equal(before.ledger, 1);

  // The second: the disk fills up while the customer is at the cart, so the
  // journal's WAL cannot grow when the order is recorded.
  await order(env, { croissant: 2, "cafe-creme": 1 });
  fill(filler);
  await payByCard(env);
  const banner = page.locator(tid("error-banner"));
  await banner.waitFor({ timeout: 10000 });
  await env.screenshot("hardening-01-disk-full");
  assert.equal((await banner.innerText()).split("\n")[0].trim(), message("error.journal"));
  assert.equal(await page.getAttribute(".app", "data-phase"), "ordering", "back to ordering, not paying nor a blank screen");
  assert.match(await page.locator(tid("cart-count")).innerText(), /^3\b/, "the cart is kept");
  // Nothing reached the terminal: give a wrongly sent payment time to show.
  await sleep(1000);
  const during = await env.sim("/sim/state");
  assert.equal(during.current, undefined, "a payment is in progress on the terminal");
  assert.equal(during.transactions, before.transactions, "the terminal received a payment request");
  assert.equal(debits(await env.ledger()).length, 1);
  const logsDuringFull = env.kioskLogs();

  // Room again: the same cart is paid, once (the refusal left the customer
  // on the menu, the cart kept).
  unlinkSync(filler);
  await page.locator(tid("open-cart")).click();
  await screen(env, "cart");
  await payByCard(env);
  await screen(env, "approved");
  const second = (await page.locator(tid("order-number")).innerText()).trim();
  assert.notEqual(second, first);
  const charges = debits(await env.ledger());
  assert.deepEqual(
    charges.map((c) => c.total),
    [130, 2 * 130 + 320],
  );
  await page.locator(tid("finish")).click();
  await screen(env, "welcome");

  // Restarted on the same directory: the journal opens, recovery resends
  // nothing, and both orders are there with their charges.
  await env.startKiosk();
  await screen(env, "welcome");
  await page.locator(tid("start-en")).click();
  await page.locator(tid("dining-eat_in")).click();
  await screen(env, "menu");
  await env.stopKiosk();
  assert.equal(debits(await env.ledger()).length, 2, "a payment was resent after the restart");
  const atts = journalAttempts(mnt.dir);
  assert.deepEqual(
    atts.map((a) => [a.order, a.state, a.amount, a.idempotentUuid]).sort(),
    charges.map((c) => [c.cartId, "approved", c.total, c.idempotentUuid]).sort(),
  );
  assert.deepEqual(journalAttempts(mnt.dir, true), []);
  assert.deepEqual(env.consoleErrors, []);

  await t.test(
    "the refused order is logged (stderr or the log file)",
    {},
    () => {
      const file = join(mnt.dir, "logs", "comptoir.log");
      const logged = logsDuringFull + (existsSync(file) ? readFileSync(file, "utf8") : "");
      assert.match(logged, /record the order/);
    },
  );
});

// ---------------------------------------------------------------------------
// b. No way out of the app.

test("navigation lock: the customer cannot leave the app", async (t) => {
  const env = await setup(t);
  const { page } = env;
  const context = page.context();
  const origin = new URL(env.kioskURL).origin;
  const elsewhere = `${env.simBase}/sim/`; // another origin that answers
  let opened = [];
  context.on("page", (p) => opened.push(p));

  /** fresh puts the page back on the kiosk's welcome screen, alone. */
  async function fresh() {
    for (const p of opened) await p.close().catch(() => {});
    opened = [];
    if (!page.url().startsWith(origin)) await page.goto(env.kioskURL);
    await screen(env, "welcome");
  }
  /** stays waits for a navigation or a popup to show, then says where we are. */
  async function stays(what) {
    await sleep(600);
    const urls = opened.map((p) => p.url());
    assert.equal(new URL(page.url()).origin, origin, `${what}: the page left the app for ${page.url()}`);
    assert.deepEqual(urls, [], `${what}: a new page was opened`);
  }
  /** link puts an anchor on top of the page and returns its locator. */
  async function link(target) {
    await page.evaluate(
      ([href, target]) => {
        document.getElementById("e2e-link")?.remove();
        const a = document.createElement("a");
        a.id = "e2e-link";
        a.href = href;
        if (target) a.target = target;
        a.textContent = "elsewhere";
        a.style.cssText = "position:fixed;top:8px;left:8px;z-index:99999;font-size:48px;background:#fff";
        document.body.append(a);
      },
      [elsewhere, target],
    );
    return page.locator("#e2e-link");
  }

  await t.test("window.open opens nothing", async () => {
    await fresh();
    await page.evaluate((u) => void window.open(u), elsewhere);
    await stays("window.open");
  });

  await t.test("a target=_blank link opens nothing", async () => {
    await fresh();
    await (await link("_blank")).click();
    await stays("target=_blank link");
  });

  await t.test("a link to another origin does not navigate", async () => {
    await fresh();
    await (await link()).click();
    await stays("same-tab link");
  });

  await t.test("middle, Ctrl and Shift clicks on a link open nothing", async () => {
    for (const click of [{ button: "middle" }, { modifiers: ["Control"] }, { modifiers: ["Shift"] }]) {
      await fresh();
      await (await link()).click(click);
      await stays(`click ${JSON.stringify(click)}`);
    }
  });

  await t.test("a URL dropped on the page opens nothing", async () => {
    await fresh();
    // A trusted drag from outside the page, as the input system delivers it.
    const cdp = await context.newCDPSession(page);
    const data = {
      items: [
        { mimeType: "text/uri-list", data: elsewhere },
        { mimeType: "text/plain", data: elsewhere },
      ],
      dragOperationsMask: 1 | 2 | 16, // copy | link | move
    };
    for (const type of ["dragEnter", "dragOver", "drop"]) {
      await cdp.send("Input.dispatchDragEvent", { type, x: 540, y: 960, data });
    }
    await cdp.detach();
    await stays("drop of a URL");
  });

  await t.test("the mouse's back button does not leave the app", async () => {
    // The page before the kiosk's, in this tab's history, is another origin.
    await fresh();
    await page.goto(elsewhere);
    await page.goto(env.kioskURL);
    await screen(env, "welcome");
    const cdp = await context.newCDPSession(page);
    await cdp.send("Input.dispatchMouseEvent", { type: "mousePressed", x: 540, y: 960, button: "back", buttons: 8, clickCount: 1 });
    await cdp.send("Input.dispatchMouseEvent", { type: "mouseReleased", x: 540, y: 960, button: "back", buttons: 0, clickCount: 1 });
    await cdp.detach();
    await stays("mouse back button");
  });

  await t.test("history and reload keys do not leave the app", async () => {
    // Headless Chromium has no browser accelerators: these keys cannot
    // navigate here whatever the page does. This catches the page's own
    // handling; the next test, what a headed browser would do.
    for (const key of ["Alt+ArrowLeft", "Alt+ArrowRight", "Backspace", "F5", "Control+r"]) {
      await fresh();
      await page.keyboard.press(key);
      await stays(key);
    }
  });

  await t.test("the page cancels the browser's history keys", async () => {
    await fresh();
    await page.evaluate(() => {
      window.__e2eKeys = [];
      addEventListener("keydown", (e) => window.__e2eKeys.push(e), true);
    });
    for (const key of ["Alt+ArrowLeft", "Alt+ArrowRight"]) await page.keyboard.press(key);
    const seen = await page.evaluate(() => window.__e2eKeys.filter((e) => e.key.startsWith("Arrow")).map((e) => [e.key, e.defaultPrevented]));
    assert.deepEqual(seen, [
      ["ArrowLeft", true],
      ["ArrowRight", true],
    ]);
  });

  await t.test("the context menu is prevented", async () => {
    await fresh();
    await page.evaluate(() => {
      window.__e2eContextMenu = null;
      addEventListener("contextmenu", (e) => (window.__e2eContextMenu = e), true);
    });
    const box = await page.locator("h1").boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2, { button: "right" });
    const seen = await page.evaluate(() => window.__e2eContextMenu && { prevented: window.__e2eContextMenu.defaultPrevented });
    assert.ok(seen, "no contextmenu event was dispatched");
    assert.equal(seen.prevented, true, "contextmenu not prevented");
  });

  await t.test("zoom, reload, print, save and devtools keys are cancelled, not typing", async () => {
    await fresh();
    await page.evaluate(() => {
      window.__e2eShortcuts = [];
      addEventListener("keydown", (e) => window.__e2eShortcuts.push(e), true);
      window.__e2eWheel = [];
      addEventListener("wheel", (e) => window.__e2eWheel.push(e), { capture: true, passive: true });
    });
    const cancelled = [
      ...["Control+Equal", "Control+Minus", "Control+0"],
      ...["F5", "Control+r", "Control+p", "Control+s", "Control+o", "Control+u"],
      ...["F12", "Control+Shift+I", "Backspace"],
    ];
    for (const key of cancelled) await page.keyboard.press(key);
    await page.keyboard.press("Digit1");
    const seen = await page.evaluate(() =>
      window.__e2eShortcuts.filter((e) => !["Control", "Shift"].includes(e.key)).map((e) => e.defaultPrevented),
    );
    assert.deepEqual(seen, [...cancelled.map(() => true), false]);

    // Ctrl+wheel zooms a desktop browser; a plain wheel scrolls.
    await page.mouse.move(540, 960);
    await page.keyboard.down("Control");
    await page.mouse.wheel(0, -200);
    await page.keyboard.up("Control");
    await page.mouse.wheel(0, 200);
    await page.waitForFunction(() => window.__e2eWheel.length >= 2);
    const wheels = await page.evaluate(() => window.__e2eWheel.map((e) => [e.ctrlKey, e.defaultPrevented]));
    assert.deepEqual(wheels, [
      [true, true],
      [false, false],
    ]);
    await stays("zoom and reload keys");
  });

  await t.test("staff mode still opens, takes typing and downloads the CSV report", async () => {
    await fresh();
    // Ctrl+Alt+S is not among the cancelled keys: it opens the PIN pad.
    await page.keyboard.press("Control+Alt+s");
    await page.locator(tid("pin-pad")).waitFor();
    // The harness set the staff PIN, as an installer does.
    for (const d of STAFF_PIN) await page.keyboard.press(d);
    await page.keyboard.press("Enter");
    await page.locator(tid("staff-shell")).waitFor();

    // A field takes typing and editing keys (Backspace, selection).
    await page.locator(tid("staff-tab-payments")).click();
    const field = page.locator(tid("filter-order-input"));
    await field.click();
    await page.keyboard.type("A-129");
    await page.keyboard.press("Backspace");
    assert.equal(await field.inputValue(), "A-12");
    await page.keyboard.press("Control+a");
    assert.equal(await field.evaluate((el) => el.value.slice(el.selectionStart, el.selectionEnd)), "A-12", "select-all in a field");
    await page.keyboard.press("Backspace");
    assert.equal(await field.inputValue(), "");

    // The report's CSV: a blob: link with a download attribute, clicked by the app.
    await page.locator(tid("staff-tab-report")).click();
    const [file] = await Promise.all([
      page.waitForEvent("download", { timeout: 10000 }),
      page.locator(tid("report-csv")).click(),
    ]);
    assert.match(file.suggestedFilename(), /\.csv$/);
    assert.match(file.url(), /^blob:/);
    assert.equal(await file.failure(), null);
    await page.locator(tid("staff-lock")).click();
    await page.locator(tid("staff-shell")).waitFor({ state: "detached" });
    await stays("staff CSV download");
  });

  await t.test("text cannot be selected on the customer screens", async () => {
    await fresh();
    /** selectable lists the elements with text of their own that could be selected. */
    const selectable = () =>
      page.evaluate(() =>
        [...document.querySelectorAll("body *")]
          .filter((el) => [...el.childNodes].some((n) => n.nodeType === Node.TEXT_NODE && n.textContent.trim()))
          .filter((el) => getComputedStyle(el).userSelect !== "none")
          .map((el) => `${el.tagName.toLowerCase()}${el.dataset.testid ? `[${el.dataset.testid}]` : ""}: ${el.textContent.trim().slice(0, 40)}`),
      );
    const check = async (name) => assert.deepEqual(await selectable(), [], `selectable text on ${name}`);

    // A real attempt first: a mouse drag across the title, then select-all.
    const box = await page.locator("h1").boundingBox();
    await page.mouse.move(box.x + 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    assert.equal(await page.evaluate(() => getSelection().toString()), "", "a drag selected text");
    await page.keyboard.press("Control+a");
    assert.equal(await page.evaluate(() => getSelection().toString()), "", "select-all selected text");
    await check("welcome");

    await env.sim("/sim/script", { behaviours: [{ preset: "hold_before_handover" }] });
    await page.locator(tid("start-en")).click();
    await screen(env, "dining");
    await check("dining");
    await page.locator(tid("dining-eat_in")).click();
    await screen(env, "menu");
    await check("menu");
    await page.locator(tid("category-viennoiseries")).click();
    await page.locator(tid("product-croissant")).click();
    await page.locator(tid("product-detail")).waitFor();
    await check("product detail");
    await page.locator(tid("add-to-cart")).click();
    await page.locator(tid("open-cart")).click();
    await screen(env, "cart");
    await check("cart");
    await page.locator(tid("go-pay")).click();
    await screen(env, "payment-choice");
    await check("payment choice");
    await page.locator(tid("pay-card")).click();
    await screen(env, "paying");
    await check("paying");
    await env.waitForSim((s) => s.current && s.current.phase === "preparing", "the payment before the handover");
    await page.locator(tid("cancel-payment")).click();
    await screen(env, "declined");
    await check("declined");
  });
});

// ---------------------------------------------------------------------------
// c. Corrupt settings.

test("corrupt settings rows: the kiosk runs on the defaults and logs a warning per key", async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), "comptoir-e2e-settings-"));
  const settings = (...args) => run(["settings", "--data-dir", dataDir, ...args]);
  // Valid JSON of the wrong shape, as anyone with `comptoir settings` can write.
  assert.equal(settings("set", "kiosk.languages", '{"fr":true}').status, 0);
  assert.equal(settings("set", "kiosk.idle_seconds", '"soon"').status, 0);
  // A torn value that is not JSON at all, as a bad sector or a half-written
  // copy leaves it (the table's CHECK refuses it on write): a valid value
  // is stored, then edited in place in the database file, same length.
  const torn = '"torn-0123456789"';
  assert.equal(settings("set", "kiosk.default_language", torn).status, 0);
  assert.ok(!existsSync(join(dataDir, "comptoir.db-wal")), "the journal's WAL was not checkpointed on close");
  const dbFile = join(dataDir, "comptoir.db");
  const bytes = readFileSync(dbFile);
  const at = bytes.indexOf(torn);
  assert.ok(at >= 0 && bytes.indexOf(torn, at + 1) < 0, "the stored value is not in the file exactly once");
  bytes.write(`{${torn.slice(0, -1)}`, at);
  writeFileSync(dbFile, bytes);
  const bad = ["kiosk.languages", "kiosk.idle_seconds", "kiosk.default_language"];

  const env = await setup(t, { dataDir });
  const { page } = env;
  await screen(env, "welcome");
  const info = await page.evaluate(async () => {
    const res = await fetch("/api/Info", { method: "POST", headers: { "Content-Type": "application/json" }, body: "[]" });
    return res.json();
  });
  assert.deepEqual(info.languages, ["fr", "en", "es"]);
  assert.equal(info.defaultLanguage, "fr");
  assert.equal(info.idleSeconds, 60);
  for (const l of ["fr", "en", "es"]) await page.locator(tid(`start-${l}`)).waitFor();
  await order(env, { croissant: 1 });
  await payByCard(env);
  await screen(env, "approved");
  assert.equal(debits(await env.ledger()).length, 1);

  const log = readFileSync(join(dataDir, "logs", "comptoir.log"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  for (const key of bad) {
    assert.ok(
      log.some((e) => e.level === "WARN" && e.key === key),
      `no warning naming ${key} in logs/comptoir.log:\n${log.map((e) => JSON.stringify(e)).join("\n")}`,
    );
  }

  await env.stopKiosk();
  await t.test(
    "`comptoir settings list` shows the torn row or names it",
    {},
    () => {
      const r = settings("list");
      assert.ok(
        /kiosk\.default_language/.test(r.status === 0 ? r.stdout : r.stderr),
        `status ${r.status}, stdout ${JSON.stringify(r.stdout)}, stderr ${JSON.stringify(r.stderr)}`,
      );
    },
  );
  // Staff can repair it with the same command.
  assert.equal(settings("set", "kiosk.default_language", '"en"').status, 0);
  assert.equal(settings("get", "kiosk.default_language").stdout.trim(), '"en"');
  const listed = settings("list");
  assert.equal(listed.status, 0);
  for (const key of bad) assert.ok(key in JSON.parse(listed.stdout), `${key} missing from settings list`);
});

// ---------------------------------------------------------------------------
// d. A data directory that cannot be written.

test("data directory not writable: serve refuses to start, saying so", async (t) => {
  /** refuses runs serve and checks it stops at once with a sentence naming dir. */
  const refuses = (dir, opts, wording = /is not writable/) => {
    const r = run(["serve", "--addr", "127.0.0.1:0", "--terminal", "127.0.0.1:1", "--data-dir", dir], { ...opts, timeout: 15000 });
    assert.equal(r.signal, null, `serve did not stop by itself (killed after 15 s):\n${r.stdout}${r.stderr}`);
    assert.notEqual(r.status, 0, `serve exited 0:\n${r.stdout}${r.stderr}`);
    assert.doesNotMatch(r.stdout, /Comptoir at/);
    assert.ok(r.stderr.includes(dir), `the message does not name ${dir}: ${r.stderr}`);
    assert.match(r.stderr, wording);
    t.diagnostic(r.stderr.trim());
  };
  const nobody = isRoot && spawnSync("setpriv", ["--reuid=nobody", "--regid=nogroup", "--clear-groups", binary(), "version"]).status === 0;
  const base = mkdtempSync(join(tmpdir(), "comptoir-e2e-ro-"));
  chmodSync(base, 0o755);
  t.after(() => rmSync(base, { recursive: true, force: true }));

  await t.test("a read-only filesystem, with a journal already on it", async (t) => {
    const mnt = mountTmpfs("size=2m,mode=0755");
    if (mnt.skip) return t.skip(mnt.skip);
    t.after(mnt.unmount);
    assert.equal(run(["settings", "--data-dir", mnt.dir, "set", "kiosk.idle_seconds", "30"]).status, 0);
    execFileSync("mount", ["-o", "remount,ro", mnt.dir]);
    refuses(mnt.dir);
  });

  await t.test("a folder the user may not write", async (t) => {
    const dir = join(base, "no-write");
    mkdirSync(dir, { mode: 0o555 });
    chmodSync(dir, 0o555);
    if (isRoot && !nobody) return t.skip("root ignores permissions, and the binary cannot be run as nobody with setpriv");
    refuses(dir, { asNobody: isRoot });
  });

  await t.test("a journal file the user may not write", async (t) => {
    if (isRoot && !nobody) return t.skip("root ignores permissions, and the binary cannot be run as nobody with setpriv");
    const dir = join(base, "db-read-only");
    assert.equal(run(["settings", "--data-dir", dir, "set", "kiosk.idle_seconds", "30"]).status, 0);
    if (isRoot) {
      // The folder becomes nobody's; the database stays root's, 0644.
      const id = (flag) => Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }));
      chownSync(dir, id("-u"), id("-g"));
      rmSync(join(dir, "comptoir.lock"), { force: true });
    } else {
      chmodSync(join(dir, "comptoir.db"), 0o444);
    }
    refuses(dir, { asNobody: isRoot }, /cannot be written|not writable/);
  });
});

// ---------------------------------------------------------------------------
// e. A second process on the same data directory.

test("a second serve on the same data directory is refused; the first keeps paying", async (t) => {
  const env = await setup(t);
  const r = run([
    "serve",
    "--addr",
    "127.0.0.1:0",
    "--terminal",
    `${env.simBase}/localapi/v4`,
    "--data-dir",
    env.dataDir,
  ]);
  assert.equal(r.signal, null, `the second serve did not stop by itself:\n${r.stdout}${r.stderr}`);
  assert.notEqual(r.status, 0);
  assert.doesNotMatch(r.stdout, /Comptoir at/);
  assert.match(r.stderr, /is in use by another Comptoir process/);
  assert.ok(r.stderr.includes(`(pid ${env.kioskPid()})`), `the message does not name the first process: ${r.stderr}`);
  t.diagnostic(r.stderr.trim());

  await screen(env, "welcome");
  await order(env, { croissant: 1 });
  await payByCard(env);
  await screen(env, "approved");
  const charges = debits(await env.ledger());
  assert.equal(charges.length, 1);

  // The journal is intact: the attempt is there, approved, and SQLite finds
  // nothing wrong with the file.
  await env.stopKiosk();
  const atts = journalAttempts(env.dataDir);
  assert.deepEqual(
    atts.map((a) => [a.order, a.state, a.amount, a.idempotentUuid]),
    [[charges[0].cartId, "approved", 130, charges[0].idempotentUuid]],
  );
  if (spawnSync("sqlite3", ["-version"]).status === 0) {
    const check = execFileSync("sqlite3", [join(env.dataDir, "comptoir.db"), "PRAGMA integrity_check;"], { encoding: "utf8" });
    assert.equal(check.trim(), "ok");
  }
});
