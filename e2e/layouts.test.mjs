// End-to-end: the customer screens on the three common screen shapes: a
// portrait kiosk (1080×1920), a landscape one (1920×1080) and a counter
// PC (1366×768). On each, nothing overflows sideways, and every touch
// target is at least 60 px in both directions on a kiosk (44 px, the
// usual minimum, at a counter).

import { test } from "node:test";
import assert from "node:assert/strict";
import { setup } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;

const shapes = [
  { name: "portrait", viewport: { width: 1080, height: 1920 }, kiosk: true },
  { name: "landscape", viewport: { width: 1920, height: 1080 }, kiosk: true },
  { name: "counter", viewport: { width: 1366, height: 768 }, kiosk: false },
];

/** small counts the visible controls and lists those smaller than min px. */
const small = (page, min) =>
  page.evaluate((min) => {
    const out = [];
    let seen = 0;
    for (const el of document.querySelectorAll("button, a[href], input, select, [role=button], [role=tab]")) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0 || r.bottom <= 0 || r.top >= innerHeight) continue;
      // A native checkbox or radio counts with its label, which is the target.
      const box = el.matches("input[type=checkbox], input[type=radio]") && el.closest("label") ? el.closest("label").getBoundingClientRect() : r;
      seen++;
      if (box.width < min - 0.5 || box.height < min - 0.5) out.push(`${el.dataset.testid ?? el.textContent.trim().slice(0, 20)} ${Math.round(box.width)}×${Math.round(box.height)}`);
    }
    return { seen, out };
  }, min);

for (const shape of shapes) {
  test(`${shape.name} ${shape.viewport.width}×${shape.viewport.height}: no sideways overflow, ${shape.kiosk ? 60 : 44} px targets`, async (t) => {
    const env = await setup(t, { viewport: shape.viewport });
    const { page } = env;
    const check = async (screen) => {
      const over = await page.evaluate(() => document.documentElement.scrollWidth - innerWidth);
      assert.ok(over <= 0, `${screen}: the page is ${over} px wider than the screen`);
      const { seen, out } = await small(page, shape.kiosk ? 60 : 44);
      assert.ok(seen > 0, `${screen}: no control found`);
      assert.deepEqual(out, [], `${screen}: targets under ${shape.kiosk ? 60 : 44} px`);
      await env.screenshot(`layout-${shape.name}-${screen}`);
    };
    await page.locator(tid("screen-welcome")).waitFor();
    await check("welcome");
    await page.locator(tid("start-en")).click();
    await page.locator(tid("screen-dining")).waitFor();
    await check("dining");
    await page.locator(tid("dining-eat_in")).click();
    await page.locator(tid("screen-menu")).waitFor();
    await check("menu");
    await page.locator(tid("category-boissons")).click();
    await page.locator(tid("product-cafe-creme")).click();
    await page.locator(tid("product-detail")).waitFor();
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== "running"));
    await check("product");
    await page.locator(tid("add-to-cart")).click();
    await page.locator(tid("open-cart")).click();
    await page.locator(tid("screen-cart")).waitFor();
    await check("cart");
  });
}
