// End-to-end: every control within reach, in the customer's words. One
// kiosk, one browser, one page: every customer screen is reached once, then
// looked at on the four screen shapes restaurants use (a portrait kiosk, a
// landscape one, a counter PC, a laptop), in normal and accessibility mode,
// in French, Spanish and English. On each, every control the customer may
// need lies wholly on the screen without scrolling, is 60 px at least both
// ways, and a touch at its centre lands on it (the element under the point
// is the control or inside it); every text is whole and uncovered; nothing
// runs off the side. On French and Spanish screens no text is a string of
// the English dictionary or one of the menu's English names. Cancel is
// pressed by a touch at its centre on each shape, before the terminal's
// handover and while it waits for a card: each ends with nothing charged on
// the simulator's ledger and the attempt cancelled in the journal.
//
// The README's pictures are taken here (build/e2e/readme-*.png); with
// REACH_SHOTS=1, every screen at every shape and mode too, to look at.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { artifacts, binary, root, setup, STAFF_PIN } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;

const shapes = [
  { name: "portrait", width: 1080, height: 1920 },
  { name: "landscape", width: 1920, height: 1080 },
  { name: "counter", width: 1366, height: 768 },
  { name: "laptop", width: 1280, height: 800 },
];
const langs = ["fr", "es", "en"];

/**
 * reachProblems runs in the page. Every visible control of the screen (of
 * the open dialog, when one is modal) must lie inside the viewport, be
 * under its own centre (and under the points halfway to its corners), and
 * measure 60 px at least both ways. Every text the customer reads
 * (headings, paragraphs, amounts, the countdown, the order number, the QR
 * code) must lie inside the viewport, each of its lines uncovered from end
 * to end. A control inside a list that scrolls on purpose (data-scroll-list:
 * the products, the cart's lines) is reached by scrolling that list, up and
 * down: it is checked when the list shows it whole; the list itself must be
 * on the screen.
 */
function reachProblems() {
  const controls = "button, a[href], input, select, textarea, [role=button], [role=tab], [role=link]";
  // A finger's target, in both directions (WCAG's 44 px, and more on a kiosk).
  const minTarget = 60;
  const read = "h1, h2, p, legend, [role=timer], [role=status], [data-testid=order-number], [data-testid=phone-qr], .amount";
  const describe = (el) => {
    if (!el) return "nothing";
    const id = el.dataset?.testid ? `[${el.dataset.testid}]` : "";
    const cls = typeof el.className === "string" && el.className.trim() ? "." + el.className.trim().split(/\s+/)[0] : "";
    return `${el.tagName.toLowerCase()}${id}${cls}`;
  };
  const name = (el) => el.dataset.testid ?? (el.getAttribute("aria-label") || el.textContent.trim().slice(0, 30) || describe(el));
  const dialogs = [...document.querySelectorAll('[aria-modal="true"]')].filter((d) => d.getBoundingClientRect().height > 0);
  const scope = dialogs.at(-1) ?? document.body;
  const out = [];
  let seen = 0;
  const inside = (r, box) => r.left >= box.left - 0.5 && r.top >= box.top - 0.5 && r.right <= box.right + 0.5 && r.bottom <= box.bottom + 0.5;
  const screenBox = { left: 0, top: 0, right: innerWidth, bottom: innerHeight };
  const on = (el, [x, y]) => {
    const hit = document.elementFromPoint(x, y);
    return hit && (hit === el || el.contains(hit)) ? null : describe(hit);
  };
  // Where a text is read: both ends and the top and bottom of each of its
  // lines (an element without text: its box).
  const readPoints = (el) => {
    const range = document.createRange();
    range.selectNodeContents(el);
    const box = el.getBoundingClientRect();
    // A line's glyphs may stand taller than its element (a big number set
    // solid): what counts is within the element.
    const lines = [...range.getClientRects()]
      .map((l) => ({ left: Math.max(l.left, box.left), right: Math.min(l.right, box.right), top: Math.max(l.top, box.top), bottom: Math.min(l.bottom, box.bottom) }))
      .map((l) => ({ ...l, width: l.right - l.left, height: l.bottom - l.top }))
      .filter((l) => l.width > 2 && l.height > 4);
    const boxes = lines.length ? lines : [box];
    return boxes.flatMap((l) => {
      const x = l.left + l.width / 2;
      const y = l.top + l.height / 2;
      return [[l.left + 1, y], [l.right - 1, y], [x, l.top + 2], [x, l.bottom - 2]];
    });
  };
  const look = (el, kind) => {
    // A native radio or checkbox is reached through its label.
    const target = el.matches("input[type=radio], input[type=checkbox]") && el.closest("label") ? el.closest("label") : el;
    if (target.closest("[inert], [aria-hidden=true]") && kind === "control") return;
    const r = target.getBoundingClientRect();
    if (r.width < 2 || r.height < 2 || getComputedStyle(target).visibility === "hidden") return;
    // In a list that scrolls, up and down only: a control cut at its side
    // is out of reach.
    const list = target.closest("[data-scroll-list]");
    const lr = list?.getBoundingClientRect();
    if (list && r.left >= lr.left - 0.5 && r.right <= lr.right + 0.5 && !inside(r, lr)) return;
    seen++;
    if (!inside(r, screenBox)) {
      out.push(`${kind} ${name(el)} is not wholly on the screen (${Math.round(r.left)},${Math.round(r.top)} to ${Math.round(r.right)},${Math.round(r.bottom)})`);
      return;
    }
    if (kind === "control") {
      const centre = on(target, [r.left + r.width / 2, r.top + r.height / 2]);
      if (centre) out.push(`control ${name(el)}: a touch at its centre lands on ${centre}`);
      // Nothing over the rest of it either (rounded corners left aside).
      const covered = [[0.25, 0.25], [0.75, 0.25], [0.25, 0.75], [0.75, 0.75]].map(([fx, fy]) => on(target, [r.left + fx * r.width, r.top + fy * r.height])).find(Boolean);
      if (!centre && covered) out.push(`control ${name(el)} is partly under ${covered}`);
      if (r.width < minTarget - 0.5 || r.height < minTarget - 0.5) out.push(`control ${name(el)} is ${Math.round(r.width)}×${Math.round(r.height)} px, under ${minTarget} px`);
    } else {
      const hidden = readPoints(target).map((pt) => on(target, pt)).find(Boolean);
      if (hidden) out.push(`text "${name(el)}" is partly hidden, under ${hidden}`);
    }
  };
  for (const el of scope.querySelectorAll(controls)) look(el, "control");
  for (const el of scope.querySelectorAll(read)) look(el, "text");
  for (const list of scope.querySelectorAll("[data-scroll-list]")) {
    const r = list.getBoundingClientRect();
    if (r.height > 0 && !inside(r, screenBox)) out.push(`the list ${describe(list)} runs off the screen`);
  }
  const over = document.scrollingElement.scrollHeight - innerHeight;
  if (over > 0) out.push(`the page is ${over} px taller than the screen`);
  const wide = document.scrollingElement.scrollWidth - innerWidth;
  if (wide > 0) {
    const past = [...document.body.querySelectorAll("*")].filter((el) => el.getBoundingClientRect().right > innerWidth + 0.5).slice(0, 3);
    out.push(`the page is ${wide} px wider than the screen: ${past.map(describe).join(", ")}`);
  }
  return { seen, out };
}

/**
 * pageText runs in the page: what the customer reads (text, accessible
 * names), outside elements marked as in another language (the language
 * buttons, the welcome screen's greetings).
 */
function pageText() {
  const lang = document.documentElement.lang;
  const parts = [];
  const foreign = (el) => {
    const l = el.closest("[lang]");
    return l && l !== document.documentElement && l.getAttribute("lang") !== lang;
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || foreign(el) || !el.getClientRects().length || getComputedStyle(el).visibility === "hidden") continue;
    parts.push(n.textContent);
  }
  for (const el of document.body.querySelectorAll("[aria-label], [title], [alt], [placeholder]")) {
    if (foreign(el)) continue;
    for (const a of ["aria-label", "title", "alt", "placeholder"]) if (el.getAttribute(a)) parts.push(el.getAttribute(a));
  }
  return parts.join("\n");
}

/**
 * lookHere is run in the page once per shape: in each language (set as the
 * kiosk's, as the language buttons do), reachProblems in normal mode, then
 * in accessibility mode (the customer's toggle), each once the screen's
 * transitions have ended; with read, the page's text too. Normal mode is
 * on again after. One round trip per shape keeps the walk fast.
 */
const lookHere = (langs, read) => `(async () => {
  const reach = ${reachProblems};
  const pageText = ${pageText};
  const toggle = document.querySelector('[data-testid="a11y-toggle"]');
  // The UI's effects run in a microtask: a task later the screen is laid out anew.
  const later = () => new Promise((r) => setTimeout(r, 0));
  const settled = () =>
    Promise.all(document.getAnimations().filter((a) => a.effect?.getTiming().iterations !== Infinity).map((a) => a.finished.catch(() => {})));
  const results = [];
  for (const lang of ${JSON.stringify(langs)}) {
    if (document.documentElement.lang !== lang) {
      const res = await fetch("/api/SetLanguage", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify([lang]) });
      if (!res.ok) throw new Error("SetLanguage " + lang + ": HTTP " + res.status);
      for (const end = Date.now() + 10000; document.documentElement.lang !== lang; ) {
        if (Date.now() > end) throw new Error("the screen did not change to " + lang);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    const modes = [];
    for (const on of [false, true]) {
      if (document.documentElement.classList.contains("a11y") !== on) toggle.click();
      await later();
      await settled();
      modes.push(reach());
    }
    results.push({ lang, modes, text: ${read} ? pageText() : "" });
  }
  if (document.documentElement.classList.contains("a11y")) toggle.click();
  await later();
  return results;
})()`;

/**
 * englishCatalog lists what must not be read on a French or Spanish screen:
 * the English dictionary (frontend/src/lib/i18n/en.ts, split at its
 * placeholders) and the English names of the menu (from the kiosk).
 */
async function englishCatalog(page) {
  const src = readFileSync(join(root, "frontend", "src", "lib", "i18n", "en.ts"), "utf8");
  const entries = [...src.matchAll(/^\s*"([\w.]+)":\s*"((?:[^"\\]|\\.)*)",?\s*$/gm)];
  const keyLines = src.split("\n").filter((l) => /^\s*"[\w.]+":/.test(l)).length;
  assert.ok(entries.length > 150 && entries.length === keyLines, `en.ts read ${entries.length} of ${keyLines} messages`);
  const phrases = new Set();
  // The customer's words only: the staff screens' are in i18n/staff/.
  for (const [, , raw] of entries) {
    for (const part of JSON.parse(`"${raw}"`).split(/\{\w+\}/)) phrases.add(part);
  }
  const catalog = await page.evaluate(async () => (await fetch("/api/Catalog", { method: "POST", headers: { "Content-Type": "application/json" }, body: "[]" })).json());
  const texts = [];
  const walk = (v) => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      if (typeof v.en === "string") texts.push(v);
      Object.values(v).forEach(walk);
    }
  };
  walk(catalog);
  for (const t of texts) phrases.add(t.en);
  // Phrases of a single short word or punctuation are not evidence of a
  // language.
  return [...phrases].map((p) => p.trim().replace(/^[^\p{L}\d]+|[^\p{L}\d]+$/gu, "")).filter((p) => /\p{L}{2}/u.test(p));
}

// The same in English as on French or Spanish screens, on purpose: the
// kiosk's name, names of the demo menu the languages share, and words both
// languages spell alike. Anything else English fails the test.
const sameWords = {
  fr: ["Comptoir", "Croissant", "Quiche Lorraine", "Cola 33 cl", "Menu", "Total", "SMS", "gluten"],
  es: ["Comptoir", "Quiche Lorraine", "Cola 33 cl", "Total", "SMS", "gluten"],
};

/** english lists the English phrases in a French or Spanish screen's text. */
function english(text, lang, phrases) {
  const allowed = new Set(sameWords[lang].map((w) => w.toLowerCase()));
  const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  return phrases.filter((p) => !allowed.has(p.toLowerCase()) && new RegExp(`(?<![\\p{L}\\d])${escape(p)}(?![\\p{L}\\d])`, "iu").test(text));
}

test("every control within reach on every customer screen, at four shapes, in both modes; no English on French or Spanish screens; Cancel cancels at each shape", async (t) => {
  // No staff PIN yet: the kiosk starts on its unavailable screen.
  const env = await setup(t, { cloud: true, pin: null });
  const { page } = env;
  const problems = [];
  const leaks = [];
  const phrases = await englishCatalog(page);
  const home = shapes[0];

  const settle = () =>
    page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== "running" || a.effect?.getTiming().iterations === Infinity));
  const screen = (name, timeout = 20000) => page.locator(tid(`screen-${name}`)).waitFor({ timeout });
  const api = (name, ...args) =>
    page.evaluate(
      async ([n, a]) => (await fetch(`/api/${n}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(a) })).json(),
      [name, args],
    );

  /**
   * tap touches a control at the centre of its box, as a finger would, once
   * the touch lands on it: a screen still changing (a dialog closing) is
   * waited for, up to a deadline; past it a problem is noted and the walk
   * goes on with Playwright's click.
   */
  const tap = async (id, where = "") => {
    const loc = page.locator(tid(id)).first();
    await loc.waitFor();
    const end = Date.now() + 5000;
    for (;;) {
      await settle();
      const at = await loc.evaluate((el) => {
        const target = el.matches("input[type=radio], input[type=checkbox]") && el.closest("label") ? el.closest("label") : el;
        const r = target.getBoundingClientRect();
        const x = r.left + r.width / 2;
        const y = r.top + r.height / 2;
        const hit = document.elementFromPoint(x, y);
        const on = r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight && !!hit && (hit === target || target.contains(hit));
        return { x, y, on };
      });
      if (at.on) return page.mouse.click(at.x, at.y);
      if (Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    problems.push(`${where}: a touch at the centre of ${id} does not land on it`);
    await loc.click();
  };

  const setShape = (s) => page.setViewportSize({ width: s.width, height: s.height });
  const setMode = async (on) => {
    if ((await page.evaluate(() => document.documentElement.classList.contains("a11y"))) === on) return;
    // Behind an open dialog, the customer would close it first: the
    // dialog's layout is what is looked at here.
    if (await page.locator('[aria-modal="true"]').count()) await page.locator(tid("a11y-toggle")).evaluate((el) => el.click());
    else await tap("a11y-toggle", `accessibility ${on ? "on" : "off"}`);
    await page.waitForFunction((on) => document.documentElement.classList.contains("a11y") === on, on);
  };
  const setLanguage = async (lang) => {
    if ((await page.evaluate(() => document.documentElement.lang)) === lang) return;
    // The welcome screen speaks every language at once (its own words
    // follow the kiosk's), and a dialog covers the language buttons.
    if ((await page.locator(tid(`language-${lang}`)).count()) && !(await page.locator('[aria-modal="true"]').count())) {
      await tap(`language-${lang}`, `language ${lang}`);
    } else await api("SetLanguage", lang);
    await page.waitForFunction((l) => document.documentElement.lang === l, lang);
  };

  /**
   * shoot keeps the README's pictures (docs/screens/, 1080×1920 in English)
   * in build/e2e/, and with REACH_SHOTS=1 every screen at every shape in
   * English, to look at.
   */
  const readme = { welcome: "welcome", menu: "menu", "a deal's choices": "deal", cart: "cart", "paying, waiting for a card": "paying", approved: "approved", unknown: "unknown" };
  const shoot = async (name, s) => {
    const file = (n) => join(artifacts, `${n}.png`);
    const all = !!process.env.REACH_SHOTS;
    const mine = s === home && readme[name];
    if (!all && !mine) return;
    mkdirSync(artifacts, { recursive: true });
    const accessible = all || (mine && readme[name] === "paying");
    for (const on of accessible ? [false, true] : [false]) {
      await setMode(on);
      await settle();
      if (mine && !on) await page.screenshot({ path: file(`readme-${readme[name]}`) });
      if (mine && on && readme[name] === "paying") await page.screenshot({ path: file("readme-accessible") });
      if (all) await page.screenshot({ path: file(`reach-${name.replace(/[^a-z]+/gi, "-")}-${s.name}${on ? "-a11y" : ""}`) });
    }
    await setMode(false);
  };

  /**
   * look checks the screen at every shape, in both modes and in each
   * language, then leaves it as the walk found it: portrait, normal mode,
   * in the walk's language.
   */
  let walkLang = "en";
  const look = async (name) => {
    for (const [i, shape] of shapes.entries()) {
      await setShape(shape);
      for (const { lang, modes, text } of await page.evaluate(lookHere(langs, i === 0))) {
        for (const [m, { seen, out }] of modes.entries()) {
          const where = `${name} ${shape.name} ${shape.width}×${shape.height}${m ? " accessible" : ""} ${lang}`;
          if (seen === 0) problems.push(`${where}: nothing found to check`);
          for (const p of out) problems.push(`${where}: ${p}`);
        }
        if (lang !== "en" && text) for (const p of english(text, lang, phrases)) leaks.push(`${name} (${lang}): "${p}"`);
        if (lang === "en" && shape === home) await shoot(name, shape);
      }
      if (process.env.REACH_SHOTS && shape !== home) await shoot(name, shape);
    }
    await setShape(home);
    await setMode(false);
    await setLanguage(walkLang);
  };
  const debits = async () => (await env.ledger()).filter((l) => l.kind === "debit");

  // The unavailable screen: no PIN yet. Staff set it, as at a first run.
  await screen("unavailable");
  await look("unavailable");
  const res = await fetch(new URL("api/staff/SetPIN", env.kioskURL), { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify([STAFF_PIN]) });
  assert.equal(res.status, 200);
  await screen("welcome");
  await look("welcome");

  // An order in French: the dining question, the menu, a product, the
  // lunch deal's choices, the cart.
  walkLang = "fr";
  await tap("start-fr", "welcome");
  await screen("dining");
  await look("dining");
  await tap("dining-eat_in", "dining");
  await screen("menu");
  await look("menu");
  await tap("category-viennoiseries", "menu");
  await tap("product-croissant", "menu");
  await page.locator(tid("product-detail")).waitFor();
  await look("a product");
  await tap("add-to-cart", "a product");
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await tap("category-boissons", "menu");
  await tap("product-cafe-creme", "menu");
  await page.locator(tid("product-detail")).waitFor();
  await look("a product's options");
  await tap("add-to-cart", "a product's options");
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await tap("category-formules", "menu");
  await tap("product-formule-dejeuner", "menu");
  await page.locator(tid("product-detail")).waitFor();
  await look("a deal's choices");
  // The last choice row is the customer's, not the Add button's.
  for (const s of shapes) {
    await setShape(s);
    for (const on of [false, true]) {
      await setMode(on);
      await tap("choice-boisson-cola", `the deal ${s.name}`);
      await tap("choice-boisson-jus-orange", `the deal ${s.name}`);
      assert.ok(await page.locator(tid("choice-boisson-jus-orange")).isChecked(), `${s.name}${on ? " accessible" : ""}: a touch on the orange juice did not choose it`);
    }
  }
  await setShape(home);
  await setMode(false);
  await tap("add-to-cart", "a deal's choices");
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await tap("open-cart", "menu");
  await screen("cart");
  assert.match(await page.locator('[data-testid^="line-choices-formule-dejeuner"]').innerText(), /Jus d'orange/);
  await look("cart");

  // Paid: a meal voucher for the eligible part, then the card. Each part
  // waits for its card, so both paying screens are seen.
  await tap("go-pay", "cart");
  await screen("payment-choice");
  await look("payment choice");
  await env.sim("/sim/script", { clear: true, behaviours: [{ preset: "hold" }, { preset: "hold" }] });
  await tap("pay-voucher", "payment choice");
  await screen("paying");
  await env.waitForSim((s) => s.current?.phase === "banking", "the voucher waiting for its card");
  await look("paying, meal voucher");
  await env.sim("/sim/customer", { action: "present_card" });
  await page.locator(tid("payment-paid")).waitFor();
  await env.waitForSim((s) => s.current?.phase === "banking", "the card waiting for its card");
  await look("paying, the rest by card");
  await tap("cancel-payment", "paying, the rest by card");
  await screen("canceling");
  await env.waitForSim((s) => s.current?.abortsHeld > 0, "the abort held by the terminal");
  await look("cancelling");
  await env.sim("/sim/customer", { action: "cancel" });
  await page.locator(tid("partly-charged")).waitFor();
  await look("declined, part paid");
  await tap("pay-rest-by-card", "declined, part paid");
  await screen("approved");
  await look("approved");
  await tap("receipt-print", "approved");
  await page.locator(`${tid("receipt-status")}[data-status="done"]`).waitFor({ timeout: 15000 });
  await tap("finish", "approved");
  await screen("welcome");

  // In Spanish: Cancel at each shape, in normal mode before the terminal's
  // handover and in accessibility mode while it waits for a card. Each ends
  // with nothing charged.
  walkLang = "es";
  await setLanguage("es");
  await tap("welcome-take_away", "welcome");
  await screen("menu");
  await tap("category-sales", "menu");
  await tap("product-jambon-beurre", "menu");
  await tap("add-to-cart", "a product");
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await tap("open-cart", "menu");
  await screen("cart");
  await tap("go-pay", "cart");
  await screen("payment-choice");
  const before = (await debits()).length;
  const cancelled = [];
  let cycle = 0;
  for (const s of shapes) {
    for (const [on, preset, phase] of [
      [false, "hold_before_handover", "preparing"],
      [true, "hold", "banking"],
    ]) {
      await env.sim("/sim/script", { clear: true, behaviours: [{ preset }] });
      await tap(cycle === 0 ? "pay-card" : "retry", "the way to pay");
      await screen("paying");
      const { current } = await env.waitForSim((st) => st.current?.phase === phase, `the payment ${phase}`);
      // Before the handover the screen is the same as after it.
      if (cycle === 1) await look("paying, waiting for a card");
      cycle++;
      await setShape(s);
      await setMode(on);
      await settle();
      await tap("cancel-payment", `paying ${s.name}${on ? " accessible" : ""}`);
      if (phase === "banking") {
        await screen("canceling");
        await env.waitForSim((st) => st.current?.abortsHeld > 0, "the abort held by the terminal");
        // The customer presents no card; the terminal gives up.
        await env.sim("/sim/customer", { action: "cancel" });
      }
      await page.locator(tid("not-charged")).waitFor();
      cancelled.push(current.idempotentUuid);
      assert.equal((await debits()).length, before, `${s.name}: charged after Cancel`);
      await setShape(home);
      await setMode(false);
    }
  }
  await look("cancelled");

  // Declined by the bank; the terminal busy with another payment (failed).
  await env.sim("/sim/script", { clear: true, behaviours: [{ preset: "decline" }] });
  await tap("retry", "cancelled");
  await screen("declined");
  await look("declined");
  await env.sim("/sim/keypad", { amount: 500, behaviour: { preset: "hold" } });
  await tap("retry", "declined");
  await screen("failed");
  await look("failed");
  await env.sim("/sim/customer", { action: "cancel" });
  await tap("cancel-order", "failed");
  await screen("welcome");
  assert.equal((await debits()).length, before, "charged after the order was cancelled");

  // In English: cancel an order from the menu and from the cart, then pay
  // with the phone.
  walkLang = "en";
  await setLanguage("en");
  await tap("welcome-eat_in", "welcome");
  await screen("menu");
  await tap("category-viennoiseries", "menu");
  await tap("product-croissant", "menu");
  await tap("add-to-cart", "a product");
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await tap("cancel-order-menu", "menu");
  await page.locator(tid("cancel-order-confirm")).waitFor();
  await look("cancel the order?");
  await tap("cancel-order-no", "cancel the order?");
  assert.match(await page.locator(tid("cart-count")).innerText(), /^1\b/, "No kept the order");
  await tap("open-cart", "menu");
  await screen("cart");
  await tap("cancel-order-menu", "cart");
  await tap("cancel-order-yes", "cancel the order?");
  await screen("welcome");
  await tap("welcome-eat_in", "welcome");
  await screen("menu");
  assert.ok(await page.locator(tid("open-cart")).isDisabled(), "the cancelled order's cart is not empty");
  await tap("category-viennoiseries", "menu");
  await tap("product-croissant", "menu");
  await tap("add-to-cart", "a product");
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await tap("open-cart", "menu");
  await tap("go-pay", "cart");
  await tap("pay-phone", "payment choice");
  await page.locator(tid("phone-qr")).waitFor();
  await look("pay with your phone");
  await tap("cancel-payment", "pay with your phone");
  await page.locator(tid("not-charged")).waitFor();
  await tap("cancel-order", "cancelled");
  await screen("welcome");

  // Unknown: the kiosk again, told to give up on the terminal after 3 s.
  await env.startKiosk(["--client-timeout", "1s", "--request-open", "3s", "--resend-pause", "200ms"]);
  await screen("welcome");
  await env.sim("/sim/script", { clear: true, behaviours: [{ preset: "hold" }] });
  await tap("welcome-eat_in", "welcome");
  await tap("category-viennoiseries", "menu");
  await tap("product-croissant", "menu");
  await tap("add-to-cart", "a product");
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await tap("open-cart", "menu");
  await tap("go-pay", "cart");
  await tap("pay-card", "payment choice");
  await screen("unknown");
  await look("unknown");

  const found = [...problems.map((p) => `out of reach: ${p}`), ...leaks.map((l) => `English on a French or Spanish screen: ${l}`)];
  assert.deepEqual(found, [], found.join("\n"));

  // Every Cancel is a cancelled attempt in the journal, and none charged.
  await env.stopKiosk();
  const attempts = JSON.parse(execFileSync(binary(), ["attempts", "--data-dir", env.dataDir], { encoding: "utf8" }));
  for (const uuid of cancelled) {
    const a = attempts.find((x) => x.idempotentUuid === uuid);
    assert.ok(a, `attempt ${uuid} is not in the journal`);
    assert.equal(a.state, "cancelled", `attempt ${uuid}`);
  }
  const charged = new Set((await debits()).map((d) => d.idempotentUuid));
  assert.deepEqual(cancelled.filter((u) => charged.has(u)), []);
  assert.deepEqual(env.consoleErrors, []);
});
