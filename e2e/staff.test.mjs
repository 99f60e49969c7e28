// End-to-end: staff mode in Chromium, against the simulated terminal. The
// PIN pad and its lockout, a reversal, a refund, an attempt whose outcome is
// unknown settled by staff, a charge the journal does not know found by the
// day's comparison (the customer screens' lack of any way in without the
// PIN is corner.test.mjs). Each test asserts on the screen and on the
// simulator's ledger or state. Screenshots go to build/e2e/staff-*.png.

import { test } from "node:test";
import assert from "node:assert/strict";
import { setup, order, STAFF_PIN, openPad, typePin, enterStaff, openTab, confirmYes, axe } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const screen = (env, name, timeout = 20000) => env.page.locator(tid(`screen-${name}`)).waitFor({ timeout });
const ofKind = (ledger, kind) => ledger.filter((l) => l.kind === kind);

// The staff PIN every test sets at first run.
const PIN = STAFF_PIN;

// The embedded demo menu: a croissant is 1,30 €, a café crème 3,20 €, a
// jambon-beurre 5,90 €.

/** payByCard goes from the cart to the payment choice and picks the card. */
async function payByCard(env) {
  await env.page.locator(tid("go-pay")).click();
  await screen(env, "payment-choice");
  await env.page.locator(tid("pay-card")).click();
}

/**
 * paidOrder orders, pays by card, checks the charge in the ledger and goes
 * back to the welcome screen. It returns the attempt's uuid (the
 * idempotentUuid the terminal saw) and the ledger's debit.
 */
async function paidOrder(env, items, total) {
  const before = ofKind(await env.ledger(), "debit").length;
  await order(env, items);
  await payByCard(env);
  await screen(env, "approved");
  const debits = ofKind(await env.ledger(), "debit");
  assert.equal(debits.length, before + 1, "one new charge on the terminal");
  const debit = debits.at(-1);
  assert.equal(debit.total, total);
  await env.page.locator(tid("finish")).click();
  await screen(env, "welcome");
  return { uuid: debit.idempotentUuid, debit };
}

/** staffCall makes a staff call over HTTP, as the page would, and returns the envelope. */
async function staffCall(env, name, ...args) {
  const res = await fetch(new URL(`api/staff/${name}`, env.kioskURL), {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(args),
  });
  assert.equal(res.status, 200, `${name}: HTTP ${res.status}`);
  return res.json();
}

const row = (uuid) => `${tid("attempt-row")}[data-uuid="${uuid}"]`;

/** inSight says whether an element lies wholly within the window and is what a tap at its centre hits. */
const inSight = (locator) =>
  locator.evaluate((el) => {
    const r = el.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight && !!hit && (hit === el || el.contains(hit));
  });

/**
 * smallTargets lists the staff screen's visible controls that are under
 * 48 px either way on a counter PC's 1366×768 screen (where the root type,
 * and so every rem, is smallest), on the tab shown.
 */
async function smallTargets(page, where) {
  const size = page.viewportSize();
  await page.setViewportSize({ width: 1366, height: 768 });
  const small = await page.evaluate(() => {
    const out = [];
    const shell = document.querySelector('[data-testid="staff-shell"]');
    for (const el of shell.querySelectorAll("button, select, input, textarea, summary, [role=tab]")) {
      // A checkbox or a radio is touched through its label.
      const target = el.matches("input[type=checkbox], input[type=radio]") ? el.closest("label") : el;
      if (!target) continue;
      const r = target.getBoundingClientRect();
      if (r.width < 2 || r.height < 2) continue;
      if (r.width < 47.5 || r.height < 47.5) out.push(`${el.dataset.testid ?? el.textContent.trim().slice(0, 24)} ${Math.round(r.width)}×${Math.round(r.height)}`);
    }
    return out;
  });
  await page.setViewportSize(size);
  return small.map((s) => `${where}: ${s}`);
}

const noStaffUI = async (page) => (await page.locator(`${tid("pin-pad")}, ${tid("staff-shell")}`).count()) === 0;

test("PIN: set at first run, then three wrong PINs lock the corner's pad and the right PIN is refused there, not at the keyboard", async (t) => {
  const env = await setup(t, { pin: null });
  const { page } = env;
  // No staff PIN yet: the kiosk takes no order (whoever found the staff
  // corner first would choose the PIN, then refund onto their own card).
  await screen(env, "unavailable");
  assert.match(await page.locator(tid("terminal-problem")).innerText(), /staff PIN/);
  const gate = await staffCall(env, "Gate");
  assert.deepEqual(gate, { ok: true, value: { hasPin: false, demo: false } });

  // First run: the pad asks for a new PIN, twice.
  await openPad(env);
  await page.locator(`${tid("pin-pad")}[data-mode="setup"]`).waitFor();
  await page.locator(`${tid("pin-setup")}[data-step="enter"]`).waitFor();
  await env.screenshot("staff-pin-setup");
  await typePin(env, PIN);
  await page.locator(`${tid("pin-setup")}[data-step="confirm"]`).waitFor();
  assert.equal(await page.locator(tid("pin-dots")).getAttribute("data-count"), "0", "the first entry is not left on the pad");
  await typePin(env, PIN);
  await page.locator(tid("staff-shell")).waitFor();
  assert.equal((await staffCall(env, "Gate")).value.hasPin, true);
  // Once set, the PIN cannot be set again without it.
  const again = await staffCall(env, "SetPIN", "1111");
  assert.equal(again.ok, false);
  assert.equal(again.error.code, "EPIN_SET");

  // Lock: back to the customer screen, open for orders now.
  await page.locator(tid("staff-lock")).click();
  await page.locator(tid("staff-shell")).waitFor({ state: "detached" });
  await screen(env, "welcome");
  assert.ok(await noStaffUI(page));

  // Reopen: now it asks for the PIN; three wrong ones lock the pad.
  await openPad(env);
  await page.locator(`${tid("pin-pad")}[data-mode="unlock"]`).waitFor();
  assert.equal(await page.locator(tid("pin-setup")).count(), 0);
  await typePin(env, "0000");
  await page.locator(tid("pin-error")).filter({ hasText: /2 more/ }).waitFor();
  await typePin(env, "1357");
  await page.locator(tid("pin-error")).filter({ hasText: /1 more/ }).waitFor();
  await typePin(env, "9999");
  const locked = page.locator(tid("pin-locked"));
  await locked.waitFor();
  const seconds = Number(await locked.getAttribute("data-seconds"));
  assert.ok(seconds > 0 && seconds <= 30, `countdown ${seconds}`);
  for (const k of ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"]) {
    assert.ok(await page.locator(tid(`pin-key-${k}`)).isDisabled(), `key ${k} is disabled while locked`);
  }
  assert.ok(await page.locator(tid("pin-clear")).isDisabled());
  assert.ok(await page.locator(tid("pin-ok")).isDisabled());
  assert.equal(await page.locator(tid("staff-shell")).count(), 0);
  await env.screenshot("staff-pin-locked");
  // The countdown runs.
  await page.waitForFunction(
    ([sel, s]) => Number(document.querySelector(sel)?.getAttribute("data-seconds")) < s,
    [tid("pin-locked"), seconds],
    { timeout: 3000 },
  );

  // The right PIN is refused while locked: by the backend...
  const refused = await page.evaluate(async (pin) => {
    const res = await fetch("/api/staff/Unlock", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify([pin]) });
    return res.json();
  }, PIN);
  assert.equal(refused.ok, false);
  assert.equal(refused.error.code, "ELOCKED_OUT");
  assert.ok(refused.error.retryAfterMs > 0 && refused.error.retryAfterMs <= 30000, JSON.stringify(refused.error));
  assert.match(refused.error.message, /locked/);
  // The corner's lockout is the corner's only: Ctrl+Alt+S (staff at a
  // keyboard) opens the pad as another origin, and the PIN gets in.
  await page.locator(tid("pin-cancel")).click();
  await page.locator(tid("pin-pad")).waitFor({ state: "detached" });
  await page.keyboard.press("Control+Alt+KeyS");
  await page.locator(`${tid("pin-pad")}[data-mode="unlock"]`).waitFor();
  assert.equal(await page.locator(tid("pin-locked")).count(), 0);
  await typePin(env, PIN);
  await page.locator(tid("staff-shell")).waitFor();
  await page.locator(tid("staff-lock")).click();
  await page.locator(tid("staff-shell")).waitFor({ state: "detached" });
  // ...while the corner's pad, opened afresh, stays locked (its keys work
  // again, the backend still says no).
  await openPad(env);
  await typePin(env, PIN);
  await page.locator(tid("pin-locked")).waitFor();
  assert.ok(Number(await page.locator(tid("pin-locked")).getAttribute("data-seconds")) > 0);
  assert.equal(await page.locator(tid("staff-shell")).count(), 0);
  assert.deepEqual(env.consoleErrors, []);

  // A restart does not lift the lockout: it is kept in the journal.
  await env.startKiosk();
  await screen(env, "welcome");
  const afterRestart = await staffCall(env, "Unlock", PIN);
  assert.equal(afterRestart.ok, false);
  assert.equal(afterRestart.error.code, "ELOCKED_OUT");
  assert.ok(afterRestart.error.retryAfterMs > 0);
});

test("reversal: a card payment reversed from the Payments tab; another refused after 16 hours", async (t) => {
  const env = await setup(t);
  const { page } = env;
  await screen(env, "welcome");
  const a = await paidOrder(env, { croissant: 2, "cafe-creme": 1 }, 2 * 130 + 320);
  const b = await paidOrder(env, { "jambon-beurre": 1 }, 590);

  await enterStaff(env);
  await openTab(env, "payments");
  const rowA = page.locator(row(a.uuid));
  await rowA.waitFor();
  assert.equal(await rowA.getAttribute("data-state"), "approved");
  assert.equal(await rowA.getAttribute("data-reversed"), "false");
  await rowA.click();
  await page.locator(`${tid("attempt-detail")}[data-uuid="${a.uuid}"]`).waitFor();
  await page.locator(tid("action-reverse")).click();
  await confirmYes(env, /5[.,]80/);
  await page.locator(tid("staff-message")).waitFor();
  assert.match(await page.locator(tid("staff-message")).innerText(), /5[.,]80/);

  // The terminal reversed exactly that transaction, for exactly what was charged.
  const reversals = ofKind(await env.ledger(), "reversal");
  assert.equal(reversals.length, 1);
  assert.equal(reversals[0].initialTransactionId, a.debit.transactionId);
  assert.equal(reversals[0].total, 580);
  assert.equal(reversals[0].net, -580);
  // The row and the detail say so; it cannot be reversed twice.
  await page.locator(`${row(a.uuid)}[data-reversed="true"]`).waitFor();
  await page.locator(tid("attempt-reversed")).waitFor();
  assert.match(await page.locator(tid("attempt-reversed")).innerText(), new RegExp(reversals[0].transactionId));
  assert.equal(await page.locator(tid("action-reverse")).count(), 0);
  // Everything was given back: no refund is offered either.
  assert.equal(await page.locator(tid("refund-amount-input")).count(), 0);
  await page.locator(tid("attempt-refundable")).waitFor();
  // The reversal is an attempt of the journal, listed beside the payment.
  await page.locator(`${tid("attempt-row")}[data-kind="reversal"][data-state="approved"]`).waitFor();
  await env.screenshot("staff-payments-reversed");

  // 17 hours later by the terminal's clock, the other payment is past the
  // 16 h reversal window: the terminal refuses, staff are told why, and
  // nothing is reversed.
  await env.sim("/sim/clock", { advance: "17h" });
  await page.locator(tid("attempt-close")).click();
  await page.locator(row(b.uuid)).click();
  await page.locator(`${tid("attempt-detail")}[data-uuid="${b.uuid}"]`).waitFor();
  await page.locator(tid("action-reverse")).click();
  await confirmYes(env, /5[.,]90/);
  const error = page.locator(tid("staff-error"));
  await error.waitFor();
  assert.equal(await error.getAttribute("data-code"), "ETERMINAL");
  assert.match(await error.innerText(), /16 hours/);
  await env.screenshot("staff-reversal-refused");
  assert.equal(ofKind(await env.ledger(), "reversal").length, 1, "nothing more reversed");
  assert.equal(await page.locator(row(b.uuid)).getAttribute("data-reversed"), "false");
  assert.deepEqual(env.consoleErrors, []);
});

test("refund: part of a paid order refunded; more than was charged is refused before the terminal", async (t) => {
  const env = await setup(t);
  const { page } = env;
  await screen(env, "welcome");
  const paid = await paidOrder(env, { croissant: 2, "cafe-creme": 1 }, 580);

  await enterStaff(env);
  await openTab(env, "payments");
  await page.locator(row(paid.uuid)).click();
  await page.locator(`${tid("attempt-detail")}[data-uuid="${paid.uuid}"]`).waitFor();
  await page.locator(tid("refund-amount-input")).fill("2.00");
  await page.locator(tid("action-refund")).click();
  await confirmYes(env, /2[.,]00/);
  await page.locator(tid("staff-message")).waitFor({ timeout: 20000 });

  const refunds = ofKind(await env.ledger(), "refund");
  assert.equal(refunds.length, 1);
  assert.equal(refunds[0].total, 200);
  assert.equal(refunds[0].net, -200);
  assert.equal(refunds[0].cartId, paid.debit.cartId, "the refund is the order's");
  assert.notEqual(refunds[0].idempotentUuid, paid.uuid, "a refund is an attempt of its own");
  // The refund is an attempt of the journal, listed beside the payment.
  await page.locator(`${row(refunds[0].idempotentUuid)}[data-kind="refund"][data-state="approved"]`).waitFor();

  // 6,00 is more than the 5,80 charged (3,80 are left): refused with a
  // sentence, and the terminal never hears of it.
  const before = await env.sim("/sim/state");
  await page.locator(tid("refund-amount-input")).fill("6.00");
  await page.locator(tid("action-refund")).click();
  await confirmYes(env, /6[.,]00/);
  const error = page.locator(tid("staff-error"));
  await error.waitFor();
  assert.equal(await error.getAttribute("data-code"), "EINVALID");
  assert.match(await error.innerText(), /at most/);
  await env.screenshot("staff-refund-refused");
  const sentence = await error.innerText();
  await t.test(
    "the refusal says the amount left in money, as the screens write it",
    {},
    () => {
      assert.match(sentence, /3[.,]80/);
      assert.doesNotMatch(sentence, /\bcents\b/);
    },
  );
  const after = await env.sim("/sim/state");
  assert.equal(after.transactions, before.transactions, "no request reached the terminal");
  assert.equal(after.ledger, before.ledger);
  assert.equal(ofKind(await env.ledger(), "refund").length, 1);
  assert.equal(await page.locator(`${tid("attempt-row")}[data-kind="refund"]`).count(), 1);
  assert.deepEqual(env.consoleErrors, []);
});

test("unknown outcome: the customer waits for staff, who settle it from the terminal's history", async (t) => {
  // The terminal holds the payment and never answers within the request-open limit.
  const env = await setup(t, { serveArgs: ["--client-timeout", "1s", "--request-open", "3s", "--resend-pause", "200ms"] });
  const { page } = env;
  await env.sim("/sim/script", { behaviours: [{ preset: "hold" }] });
  await screen(env, "welcome");
  await order(env, { croissant: 1 });
  await payByCard(env);
  await screen(env, "paying");
  await screen(env, "unknown", 15000);
  const number = (await page.locator(tid("order-number")).innerText()).trim();
  assert.match(number, /\d+/);
  // Nothing for the customer to press but the language switch and the accessibility mode.
  const buttons = await page.locator("button:visible, a:visible").evaluateAll((els) => els.map((e) => e.dataset.testid ?? e.textContent.trim()));
  assert.deepEqual(
    buttons.filter((b) => !/^language-/.test(b) && b !== "a11y-toggle"),
    [],
    `buttons on the unknown screen: ${buttons.join(", ")}`,
  );
  await env.screenshot("staff-customer-unknown");
  const current = (await env.sim("/sim/state")).current;
  assert.ok(current, "the terminal still holds the payment");
  const uuid = current.idempotentUuid;
  assert.equal(ofKind(await env.ledger(), "debit").length, 0);

  // Meanwhile the customer's card went through on the terminal.
  await env.sim("/sim/customer", { action: "present_card" });
  await env.waitForSim((s) => s.ledger === 1, "the charge");
  const [debit] = ofKind(await env.ledger(), "debit");
  assert.equal(debit.idempotentUuid, uuid);
  assert.equal(debit.total, 130);
  // The kiosk gave up waiting: the attempt stays unknown until staff decide.
  await sleep(300);
  await screen(env, "unknown");

  await enterStaff(env);
  await page.locator(tid("close-checkout")).waitFor();
  await openTab(env, "payments");
  await page.locator(tid("filter-attention")).check();
  await page.locator(tid("filter-apply")).click();
  const r = page.locator(row(uuid));
  await r.waitFor();
  assert.equal(await r.getAttribute("data-state"), "unknown");
  assert.equal(await r.getAttribute("data-attention"), "true");
  assert.equal(await page.locator(tid("attempt-row")).count(), 1, "only the attempt that needs attention");
  await r.click();
  await page.locator(tid("action-resolve")).click();
  const evidence = page.locator(tid("resolve-evidence"));
  await evidence.waitFor();
  // What the terminal's history says: a charge of this amount, for this order.
  assert.match(await page.locator(tid("resolve-hint")).innerText(), /most likely charged/);
  const entries = page.locator(tid("resolve-entry"));
  assert.equal(await entries.count(), 1);
  assert.equal(await entries.first().getAttribute("data-charged"), "true");
  assert.match(await entries.first().innerText(), new RegExp(debit.transactionId));
  await env.screenshot("staff-resolve-evidence");

  await page.locator(tid("resolve-note")).fill("card ticket seen");
  await page.locator(tid("resolve-paid")).click();
  await confirmYes(env, /1[.,]30/);
  await page.locator(tid("staff-message")).waitFor();
  // The attempt is approved now, and its order no longer needs attention.
  await page.locator(tid("resolve-evidence")).waitFor({ state: "detached" });
  await page.locator(`${tid("attempt-detail")}[data-state="approved"]`).waitFor();
  // The list is read again after the decision: wait for it, the row leaves.
  await page.locator(row(uuid)).waitFor({ state: "detached", timeout: 15000 });
  await page.locator(tid("filter-attention")).uncheck();
  await page.locator(tid("filter-apply")).click();
  await page.locator(`${row(uuid)}[data-state="approved"][data-attention="false"]`).waitFor();
  // The journal says the same to a session of the test's own.
  const sid = (await staffCall(env, "Unlock", PIN)).value.id;
  const list = await staffCall(env, "Attempts", sid, { needsAttention: true });
  assert.equal(list.value.total, 0);
  const all = await staffCall(env, "Attempts", sid, {});
  const att = all.value.attempts.find((x) => x.idempotentUuid === uuid);
  assert.equal(att.state, "approved");
  assert.equal(att.orderStatus, "paid");
  assert.equal(att.needsAttention, false);
  await staffCall(env, "Lock", sid);
  assert.equal((await staffCall(env, "Attempts", sid, {})).error?.code, "ESESSION", "a locked session is over");
  // Settling charged nothing more.
  assert.equal(ofKind(await env.ledger(), "debit").length, 1);

  // The customer screen is released by staff, and shows the welcome again.
  await page.locator(tid("close-checkout")).click();
  await page.locator(tid("staff-message")).waitFor();
  await page.locator(tid("close-checkout")).waitFor({ state: "detached" });
  await page.locator(tid("staff-lock")).click();
  await screen(env, "welcome");
  assert.deepEqual(env.consoleErrors, []);
});

test("discrepancy: a charge keyed on the terminal is not in the journal; every staff tab, its controls 48 px at least", async (t) => {
  const env = await setup(t);
  const { page } = env;
  await screen(env, "welcome");
  const paid = await paidOrder(env, { "cafe-creme": 1 }, 320);
  // A charge keyed on the terminal itself: the kiosk knows nothing of it.
  const { idempotentUuid } = await env.sim("/sim/keypad", { amount: 1200, behaviour: { preset: "approve" } });
  await env.waitForSim((s) => s.ledger === 2 && !s.current, "the keypad charge");
  const keyed = ofKind(await env.ledger(), "debit").find((d) => d.idempotentUuid === idempotentUuid);
  assert.ok(keyed?.keypad);
  assert.equal(keyed.total, 1200);

  await enterStaff(env);
  await page.locator(tid("terminal-reachable")).waitFor();
  // Every tab can be seen and tapped on the kiosk's portrait screen, in every language.
  for (const lang of ["fr", "es", "en"]) {
    await page.locator(tid(`staff-lang-${lang}`)).click();
    for (const tab of ["terminal", "payments", "history", "settings", "report", "audit"]) {
      assert.ok(await inSight(page.locator(tid(`staff-tab-${tab}`))), `the ${tab} tab is out of sight (${lang})`);
    }
  }
  await env.screenshot("staff-terminal");
  const small = await smallTargets(page, "terminal");

  await openTab(env, "payments");
  await page.locator(row(paid.uuid)).click();
  await page.locator(tid("attempt-detail")).waitFor();
  await env.screenshot("staff-payments");
  small.push(...(await smallTargets(page, "payments")));

  await openTab(env, "history");
  const keyedRow = page.locator(`${tid("history-row")}[data-transaction-id="${keyed.transactionId}"]`);
  await keyedRow.waitFor();
  assert.equal(await keyedRow.getAttribute("data-in-journal"), "false");
  const kioskRow = page.locator(`${tid("history-row")}[data-transaction-id="${paid.debit.transactionId}"]`);
  assert.equal(await kioskRow.getAttribute("data-in-journal"), "true");
  assert.equal(await page.locator(tid("history-row")).count(), 2);
  // The charge the journal does not know can be reversed from its row: the button is on screen.
  const reverseKeyed = keyedRow.locator(tid("history-reverse"));
  assert.ok(await inSight(reverseKeyed), "the keyed charge's reverse button is out of sight");
  assert.equal(await kioskRow.locator(tid("history-reverse")).count(), 0);
  await page.locator(tid("compare-run")).click();
  await page.locator(tid("compare-summary")).waitFor();
  const diffs = page.locator(tid("diff-row"));
  assert.equal(await diffs.count(), 1, await page.locator(tid("diff-list")).innerText());
  assert.equal(await diffs.first().getAttribute("data-kind"), "terminal_only");
  assert.match(await diffs.first().innerText(), new RegExp(keyed.transactionId));
  await env.screenshot("staff-history");
  small.push(...(await smallTargets(page, "history")));
  const diffText = await diffs.first().locator("p").first().innerText();
  await t.test(
    "the difference's sentence gives the amount with its currency",
    {},
    () => assert.match(diffText, /€\s?12[.,]00|12[.,]00\s?€|EUR/),
  );

  await openTab(env, "settings");
  await page.locator(tid("settings-list")).waitFor();
  await env.screenshot("staff-settings");
  small.push(...(await smallTargets(page, "settings")));

  await openTab(env, "report");
  await page.locator(tid("report-run")).click();
  await page.locator(tid("report")).waitFor();
  await page.locator(`${tid("report-diff-row")}[data-kind="terminal_only"]`).waitFor();
  await env.screenshot("staff-report");
  small.push(...(await smallTargets(page, "report")));

  await openTab(env, "audit");
  await page.locator(tid("audit-row")).first().waitFor();
  await env.screenshot("staff-audit");
  small.push(...(await smallTargets(page, "audit")));
  assert.deepEqual(small, [], "staff controls under 48 px at 1366×768");
  // Looking changed nothing on the terminal.
  assert.equal((await env.ledger()).length, 2);
  assert.deepEqual(env.consoleErrors, []);
});

test("reconciliation: a charge no order knows is found by the day's check and reversed from it in two touches", async (t) => {
  const env = await setup(t);
  const { page } = env;
  await screen(env, "welcome");
  const paid = await paidOrder(env, { "cafe-creme": 1 }, 320);
  const { idempotentUuid } = await env.sim("/sim/keypad", { amount: 980, behaviour: { preset: "approve" } });
  await env.waitForSim((s) => s.ledger === 2 && !s.current, "the keypad charge");
  const keyed = ofKind(await env.ledger(), "debit").find((d) => d.idempotentUuid === idempotentUuid);

  await enterStaff(env);
  await openTab(env, "report");
  await page.locator(tid("reconcile-run")).click();
  await page.locator(tid("reconcile")).waitFor();
  // The journal's payment and the keyed charge, side by side; the provider's column is not set up here.
  assert.equal(await page.locator(tid("reconcile-line")).count(), 2);
  assert.match(await page.locator(tid("reconcile-columns")).innerText(), /Terminal/);
  const diff = page.locator(`${tid("reconcile-diff-row")}[data-kind="charged_no_order"]`);
  assert.equal(await diff.count(), 1, await page.locator(tid("reconcile")).innerText());
  assert.match(await diff.innerText(), new RegExp(keyed.transactionId));
  for (const v of await axe(page)) assert.fail(`staff reconciliation: ${v}`);
  await env.screenshot("staff-reconcile");

  // Two touches: the fix, then yes.
  await diff.locator(tid("reconcile-fix")).click();
  await confirmYes(env, /9[.,]80/);
  await page.locator(tid("reconcile-none")).waitFor();
  const reversals = ofKind(await env.ledger(), "reversal");
  assert.equal(reversals.length, 1);
  assert.equal(reversals[0].initialTransactionId, keyed.transactionId);
  // The kiosk's own payment was left alone.
  assert.equal(ofKind(await env.ledger(), "debit").length, 2);
  assert.ok(paid.debit.transactionId !== keyed.transactionId);
  assert.deepEqual(env.consoleErrors, []);
});
