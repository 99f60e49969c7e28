// The staff corner, from the customer's side: no control of any customer
// screen opens staff mode or lies under the corner, the corner needs five
// quick taps, and no staff call answers without a session. (Its own file:
// it clicks every control of every screen, the longest of the e2e tests.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { setup, tapCorner } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const screen = (env, name, timeout = 20000) => env.page.locator(tid(`screen-${name}`)).waitFor({ timeout });
const noStaffUI = async (page) => (await page.locator(`${tid("pin-pad")}, ${tid("staff-shell")}`).count()) === 0;

/**
 * customerControls lists the visible, enabled buttons and links of the
 * customer screen, by a key that finds each again: its data-testid, else
 * its text and rank.
 */
function customerControls(page) {
  return page.evaluate(() => {
    const seen = new Map();
    const out = [];
    for (const el of document.querySelectorAll("button, a[href], [role=button], [role=link]")) {
      if (el.closest('[data-testid="pin-pad"], [data-testid="staff-shell"]')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || getComputedStyle(el).visibility === "hidden") continue;
      // Under a dialog's backdrop, say: not a control the customer can reach now.
      const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      if (hit && !(hit === el || el.contains(hit))) continue;
      const text = (el.textContent ?? "").trim().replace(/\s+/g, " ");
      const base = el.dataset.testid ? `testid=${el.dataset.testid}` : `text=${text}`;
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      out.push({ key: base, n, disabled: el.disabled === true, text });
    }
    return out;
  });
}

function locate(page, c) {
  const [how, value] = [c.key.slice(0, c.key.indexOf("=")), c.key.slice(c.key.indexOf("=") + 1)];
  const all =
    how === "testid" ? page.locator(tid(value)) : page.locator("button, a[href], [role=button], [role=link]").filter({ hasText: value });
  return all.nth(c.n);
}

/**
 * cornerCheck probes every control of the customer screen in the viewport at
 * its centre and near its four corners (inside its rounded border). A
 * control whose centre something else covers (a dialog's backdrop) is not
 * shown to the customer and is left out. It returns where the staff corner
 * was hit instead of a control (covered) and where anything else but the
 * control was (elsewhere).
 */
function cornerCheck(page) {
  return page.evaluate(() => {
    const corner = document.querySelector('[data-testid="staff-corner"]');
    const inCorner = (el) => !!corner && !!el && (el === corner || corner.contains(el));
    const name = (el) => (el ? (el.dataset?.testid ?? `${el.tagName.toLowerCase()}.${el.className}`) : null);
    const covered = [];
    const elsewhere = [];
    let probed = 0;
    for (const el of document.querySelectorAll("button, a[href], input, select, textarea, [role=button], [role=link]")) {
      if (el.closest('[data-testid="pin-pad"], [data-testid="staff-shell"]')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      if (r.bottom <= 0 || r.right <= 0 || r.top >= innerHeight || r.left >= innerWidth) continue;
      const radius = Math.min(parseFloat(getComputedStyle(el).borderTopLeftRadius) || 0, r.width / 2, r.height / 2);
      const inset = Math.ceil(radius * 0.3) + 2;
      const centre = [r.left + r.width / 2, r.top + r.height / 2];
      const atCentre = document.elementFromPoint(...centre);
      if (!inCorner(atCentre) && !(atCentre === el || el.contains(atCentre))) continue;
      probed++;
      const points = [
        centre,
        [r.left + inset, r.top + inset],
        [r.right - inset, r.top + inset],
        [r.left + inset, r.bottom - inset],
        [r.right - inset, r.bottom - inset],
      ].filter(([x, y]) => x >= 0 && y >= 0 && x < innerWidth && y < innerHeight);
      for (const [x, y] of points) {
        const hit = document.elementFromPoint(x, y);
        const at = [Math.round(x), Math.round(y)];
        if (inCorner(hit)) covered.push({ control: name(el), at });
        else if (!(hit === el || el.contains(hit))) elsewhere.push({ control: name(el), at, hit: name(hit) });
      }
    }
    return { probed, covered, elsewhere };
  });
}

test("no way into staff mode without the PIN from the customer screens", async (t) => {
  const env = await setup(t);
  const { page } = env;
  await screen(env, "welcome");
  const phase = () => page.locator("[data-phase]").first().getAttribute("data-phase");
  const intent = (name) =>
    page.evaluate(async (n) => (await fetch(`/api/${n}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "[]" })).json(), name);
  /** home brings the customer screen back to the welcome, through the idle timeout's intent. */
  async function home() {
    await env.sim("/sim/script", { clear: true });
    const end = Date.now() + 15000;
    for (let p = await phase(); p !== "welcome"; p = await phase()) {
      assert.ok(Date.now() < end, `stuck on ${p}`);
      if (p === "paying") await intent("Cancel"); // a payment held before the terminal's handover
      if (p === "paying" || p === "canceling") await sleep(100);
      else await intent("Abandon");
    }
    await screen(env, "welcome");
    // Each screen is probed as most customers see it: the accessibility
    // mode (clicked on the welcome screen like any control) off again.
    const a11y = page.locator(tid("a11y-toggle"));
    if ((await a11y.getAttribute("aria-pressed")) === "true") await a11y.click();
  }

  // The screens of a normal order, each with the way to reach it from the welcome.
  const toMenu = async () => {
    await page.locator(tid("start-en")).click();
    await page.locator(tid("dining-eat_in")).click();
    await screen(env, "menu");
  };
  const toProduct = async () => {
    await toMenu();
    await page.locator(tid("category-viennoiseries")).click();
    await page.locator(tid("product-croissant")).click();
    await page.locator(tid("product-detail")).waitFor();
  };
  const toCart = async () => {
    await toMenu();
    await page.locator(tid("category-viennoiseries")).click();
    await page.locator(tid("product-croissant")).click();
    await page.locator(tid("add-to-cart")).click();
    await page.locator(tid("open-cart")).click();
    await screen(env, "cart");
  };
  const toChoice = async () => {
    await toCart();
    await page.locator(tid("go-pay")).click();
    await screen(env, "payment-choice");
  };
  const toPaying = async () => {
    await env.sim("/sim/script", { clear: true, behaviours: [{ preset: "hold_before_handover" }] });
    await toChoice();
    await page.locator(tid("pay-card")).click();
    await screen(env, "paying");
  };
  const toApproved = async () => {
    // A held payment cancelled before its request left leaves its
    // behaviour queued: nothing queued, the terminal approves.
    await env.sim("/sim/script", { clear: true, behaviours: [] });
    await toChoice();
    await page.locator(tid("pay-card")).click();
    await screen(env, "approved");
  };
  const toDeclined = async () => {
    await env.sim("/sim/script", { clear: true, behaviours: [{ preset: "decline" }] });
    await toChoice();
    await page.locator(tid("pay-card")).click();
    await screen(env, "declined");
  };
  const screens = [
    ["welcome", async () => {}, () => screen(env, "welcome")],
    ["menu", toMenu, () => screen(env, "menu")],
    ["product", toProduct, () => page.locator(tid("product-detail")).waitFor()],
    ["cart", toCart, () => screen(env, "cart")],
    ["payment-choice", toChoice, () => screen(env, "payment-choice")],
    ["paying", toPaying, () => screen(env, "paying")],
    ["approved", toApproved, () => screen(env, "approved")],
    ["declined", toDeclined, () => screen(env, "declined")],
  ];
  const isOn = async (name) => {
    const detail = (await page.locator(tid("product-detail")).count()) > 0;
    if (name === "product") return detail;
    return !detail && (await page.locator(tid(`screen-${name}`)).count()) > 0;
  };

  // Each screen is reached afresh, probed, and its controls clicked one by
  // one, each once (by key), going back to the screen whenever a click left
  // it, until a fresh screen has nothing left to click.
  let clicked = 0;
  for (const [name, reach] of screens) {
    await home();
    await reach();
    // The corner covers no control of this screen.
    const probe = await cornerCheck(page);
    assert.ok(probe.probed > 0, `no control probed on ${name}`);
    assert.deepEqual(probe.covered, [], `the staff corner covers a control on ${name}`);
    assert.deepEqual(probe.elsewhere, [], `something else covers a part of a control on ${name}`);
    if (name === "welcome" || name === "approved") await env.screenshot(`staff-corner-${name}`);
    const done = new Set();
    let fresh = true;
    for (let guard = 0; ; guard++) {
      assert.ok(guard < 80, `${name}: too many clicks`);
      if (!(await isOn(name))) {
        await home();
        await reach();
        fresh = true;
      }
      const next = (await customerControls(page)).find((c) => !c.disabled && !done.has(`${c.key}#${c.n}`));
      if (!next) {
        if (fresh) break;
        await home();
        await reach();
        fresh = true;
        continue;
      }
      done.add(`${next.key}#${next.n}`);
      const target = locate(page, next);
      if (!(await target.isVisible()) || (await target.isDisabled())) continue;
      // force: the welcome's call to action breathes (never "stable"); the
      // corner check makes sure of what is hit at a control's centre.
      await target.click({ force: true, timeout: 5000 });
      fresh = false;
      clicked++;
      await sleep(60);
      assert.ok(await noStaffUI(page), `${name}: clicking ${next.key} opened staff mode`);
      assert.deepEqual((await cornerCheck(page)).covered, [], `after ${next.key} on ${name}, the staff corner covers a control`);
    }
    t.diagnostic(`${name}: ${probe.probed} controls probed; clicked ${[...done].map((k) => k.replace(/^(testid|text)=|#0$/g, "")).join(", ")}`);
  }
  assert.ok(clicked >= 40, `only ${clicked} controls clicked`);
  await home();
  // Customers pay; only staff reverse or refund.
  assert.deepEqual(
    (await env.ledger()).filter((l) => l.kind !== "debit"),
    [],
  );

  // Four taps on the corner do nothing; nor do five spread over more than 3 s.
  await tapCorner(env, 4);
  await sleep(300);
  assert.ok(await noStaffUI(page), "4 taps opened the pad");
  await sleep(3200); // the four taps are forgotten
  await tapCorner(env, 5, 850);
  await sleep(300);
  assert.ok(await noStaffUI(page), "5 taps over 3.4 s opened the pad");

  // Every staff call but the PIN's own needs a session: none, a made-up one.
  const calls = {
    Touch: [],
    ChangePIN: ["1111", "2222"],
    About: [],
    Terminal: [true],
    ChooseTerminal: ["x"],
    SetTerminalAddress: ["127.0.0.1:1"],
    Attempts: [{}],
    History: [{}],
    Compare: [""],
    Reverse: ["00000000-0000-0000-0000-000000000000"],
    ReverseTransaction: ["x"],
    Refund: ["x", 100],
    Reprint: ["x"],
    Share: ["x", "print"],
    ResolveUnknown: ["x"],
    ConfirmUnknown: ["x", { paid: true, note: "", transactionId: "" }],
    Settings: [],
    SaveSetting: ["kiosk.idle_seconds", 30],
    ReloadCatalog: [],
    Report: [""],
    ReportCSV: [""],
    PrintReport: [""],
    Audit: [50],
    CloseCheckout: [],
    Quit: [],
    Restart: [],
  };
  const before = await env.sim("/sim/state");
  for (const sid of ["", "0123456789abcdef0123456789abcdef"]) {
    const answers = await page.evaluate(
      async ([calls, sid]) => {
        const out = {};
        for (const [name, args] of Object.entries(calls)) {
          const res = await fetch(`/api/staff/${name}`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify([sid, ...args]),
          });
          out[name] = { status: res.status, body: await res.json() };
        }
        return out;
      },
      [calls, sid],
    );
    for (const [name, a] of Object.entries(answers)) {
      assert.equal(a.status, 200, `${name}: HTTP ${a.status}`);
      assert.equal(a.body.ok, false, `${name} answered without a session`);
      assert.equal(a.body.error.code, "ESESSION", `${name}: ${JSON.stringify(a.body)}`);
    }
  }
  const after = await env.sim("/sim/state");
  assert.equal(after.transactions, before.transactions);
  assert.equal(after.ledger, before.ledger);
  assert.equal(after.printed, before.printed);
  assert.ok(await noStaffUI(page));
  assert.deepEqual(env.consoleErrors, []);
});
