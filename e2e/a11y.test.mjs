// End-to-end: accessibility. axe-core checks every customer screen of an
// order, in each language and in accessibility mode, against WCAG 2.1 A and
// AA: any violation fails. Then a whole purchase in accessibility mode with
// the keyboard alone.

import { test } from "node:test";
import assert from "node:assert/strict";
import { axe, setup } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;
const screen = (page, name) => page.locator(tid(`screen-${name}`)).waitFor({ timeout: 20000 });

/**
 * eachScreen walks an order through its customer screens in a language and
 * calls check on each, by name.
 */
async function eachScreen(env, lang, check, accessible = false) {
  const { page } = env;
  await screen(page, "welcome");
  if (accessible) await page.locator(tid("a11y-toggle")).click();
  await check("welcome");
  await page.locator(tid(`start-${lang}`)).click();
  await screen(page, "dining");
  await check("dining");
  await page.locator(tid("dining-eat_in")).click();
  await screen(page, "menu");
  await check("menu");
  await page.locator(tid("category-viennoiseries")).click();
  await page.locator(tid("product-croissant")).click();
  await page.locator(tid("product-detail")).waitFor();
  await check("product detail");
  await page.locator(tid("add-to-cart")).click();
  await page.locator(tid("category-boissons")).click();
  await page.locator(tid("product-cafe-creme")).click();
  await page.locator(tid("product-detail")).waitFor();
  await check("product options");
  await page.locator(tid("close-detail")).click();
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await page.locator(tid("category-formules")).click();
  await page.locator(tid("product-formule-dejeuner")).click();
  await page.locator(tid("product-detail")).waitFor();
  await check("deal choices");
  await page.locator(tid("close-detail")).click();
  await page.locator(tid("product-detail")).waitFor({ state: "detached" });
  await page.locator(tid("open-cart")).click();
  await screen(page, "cart");
  await check("cart");
  await page.locator(tid("cancel-order-menu")).click();
  await page.locator(tid("cancel-order-confirm")).waitFor();
  await check("cancel the order?");
  await page.locator(tid("cancel-order-no")).click();
  await page.locator(tid("cancel-order-confirm")).waitFor({ state: "detached" });
  await page.locator(tid("go-pay")).click();
  await screen(page, "payment-choice");
  await check("payment choice");
  await env.sim("/sim/script", { behaviours: [{ preset: "decline" }] });
  await page.locator(tid("pay-card")).click();
  await screen(page, "declined");
  await check("declined");
  await env.sim("/sim/script", { behaviours: [{ preset: "hold_before_handover" }] });
  await page.locator(tid("retry")).click();
  await screen(page, "paying");
  await check("paying");
  // Cancel once the terminal holds the payment: a cancel before the request
  // leaves sends nothing, and the held customer would wait for the retry.
  await env.waitForSim((s) => s.current?.phase === "preparing", "the payment before the handover");
  await page.locator(tid("cancel-payment")).click();
  await screen(page, "declined");
  await page.locator(tid("retry")).click();
  await screen(page, "approved");
  await check("approved");
  await page.locator(tid("finish")).click();
  await screen(page, "welcome");
}

for (const accessible of [false, true]) {
  test(`axe: no WCAG 2.1 AA violation on any customer screen, in each language${accessible ? ", accessibility mode" : ""}`, async (t) => {
    const env = await setup(t, { timescale: 0.05 });
    const found = [];
    for (const lang of ["fr", "en", "es"]) {
      await eachScreen(
        env,
        lang,
        async (name) => {
          for (const v of await axe(env.page)) found.push(`${lang} ${name}: ${v}`);
          if (lang === "en") await env.screenshot(`a11y-${accessible ? "on" : "off"}-${name.replace(/ /g, "-")}`);
          if (accessible) {
            const on = await env.page.locator(tid("a11y-toggle")).getAttribute("aria-pressed");
            assert.equal(on, "true", `accessibility mode is off on ${name}`);
          }
        },
        accessible,
      );
    }
    assert.deepEqual(found, []);
  });
}

test("accessibility mode: a whole purchase with the keyboard alone, the focus always visible", async (t) => {
  const env = await setup(t, { timescale: 0.05 });
  const { page } = env;
  /**
   * press tabs to the element with this test id (at most 80 presses: it
   * must be reachable by Tab), checks that the focus is visible on it,
   * and presses Enter.
   */
  const press = async (id) => {
    for (let i = 0; i < 80; i++) {
      const at = await page.evaluate(() => document.activeElement?.dataset?.testid ?? "");
      if (at === id) {
        const outline = await page.evaluate(() => {
          const s = getComputedStyle(document.activeElement);
          return s.outlineStyle !== "none" && parseFloat(s.outlineWidth) >= 2;
        });
        assert.ok(outline, `the focus on ${id} is not visible`);
        await page.keyboard.press("Enter");
        return i;
      }
      await page.keyboard.press("Tab");
    }
    throw new Error(`${id} cannot be reached with Tab`);
  };
  await screen(page, "welcome");
  await press("a11y-toggle");
  assert.equal(await page.locator(tid("a11y-toggle")).getAttribute("aria-pressed"), "true");
  await press("start-en");
  await screen(page, "dining");
  await press("dining-take_away");
  await screen(page, "menu");
  await press("category-viennoiseries");
  await press("product-croissant");
  await page.locator(tid("product-detail")).waitFor();
  await press("add-to-cart");
  await press("open-cart");
  await screen(page, "cart");
  await press("go-pay");
  await screen(page, "payment-choice");
  await press("pay-card");
  await screen(page, "approved");
  await env.screenshot("a11y-keyboard-approved");
  const charges = (await env.ledger()).filter((l) => l.kind === "debit");
  assert.equal(charges.length, 1);
  assert.equal(charges[0].total, 130);
  assert.deepEqual(charges[0].taxBreakdown, [{ tax_amount: 7 }], "taken away: 5.5 %");
  await press("finish");
  await screen(page, "welcome");
  // The next customer starts without it.
  assert.equal(await page.locator(tid("a11y-toggle")).getAttribute("aria-pressed"), "false");
});
