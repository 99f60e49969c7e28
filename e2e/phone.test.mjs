// End-to-end: paying with the phone. The kiosk in browser mode, a
// simulated terminal and a simulated provider cloud; the test reads the QR
// code from a screenshot as a phone would, opens its link, pays as the
// customer, and checks the kiosk, the journal and the cloud agree.

import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import jsQR from "jsqr";
import { PNG } from "pngjs";
import { axe, setup, binary, order, enterStaff, openTab, confirmYes } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;

/** scan decodes the one QR code of a screenshot of the page. */
async function scan(page) {
  const png = PNG.sync.read(await page.screenshot());
  const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height);
  assert.ok(code, "no QR code could be read from the screen");
  return code.data;
}

async function cloud(env, path, body) {
  const res = await fetch(env.cloudBase + path, body === undefined ? {} : { method: "POST", body: JSON.stringify(body) });
  if (!res.ok) throw new Error(`${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

test("pay with the phone: the QR code read from the screen, paid in two parts, approved", async (t) => {
  const env = await setup(t, { cloud: true });
  const { page } = env;
  await order(env, { croissant: 2, "cafe-creme": 1 });
  const total = (await page.locator(tid("cart-total")).innerText()).trim();
  await page.locator(tid("go-pay")).click();
  await page.locator(tid("pay-phone")).click();
  const qr = page.locator(tid("phone-qr"));
  await qr.waitFor();
  // At least 6 cm on a 1080 × 1920 kiosk screen (a 32-inch one: 0.37 mm a
  // pixel, so 163 px): the code is drawn far larger.
  const box = await qr.boundingBox();
  assert.ok(box.width >= 400, `the QR code is ${box.width} px wide`);
  await env.screenshot("phone-qr");

  const link = await scan(page);
  assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/pay\//);
  // The customer's phone opens the link: the provider's page of the cart.
  const phone = await page.context().newPage();
  await phone.goto(link);
  const digits = (s) => s.replace(/\D/g, "");
  assert.equal(digits(await phone.locator(tid("pay-amount")).innerText()), digits(total));

  // Part by meal voucher, through the control call that plays the customer:
  // the kiosk shows it and keeps waiting.
  const cart = (await cloud(env, "/sim/carts")).find((c) => c.payment_link === link);
  assert.ok(cart, "the link is no cart of the cloud");
  await cloud(env, `/sim/carts/${cart.cart_id}/pay`, { amount: 200, kind: "meal_voucher" });
  await page.locator(tid("phone-paid")).waitFor();
  // Then the rest by card on the phone's page.
  await phone.reload();
  await phone.locator(tid("pay-now")).click();
  await page.locator(tid("screen-approved")).waitFor();
  await env.screenshot("phone-approved");

  const paid = (await cloud(env, "/sim/carts")).find((c) => c.cart_id === cart.cart_id);
  assert.equal(paid.status, "ok");
  assert.equal(paid.paid_amount, paid.requested_amount);
  assert.equal((await env.ledger()).length, 0, "the card terminal charged nothing");
  await env.stopKiosk();
  const attempts = JSON.parse(execFileSync(binary(), ["attempts", "--data-dir", env.dataDir], { encoding: "utf8" }));
  assert.equal(attempts.length, 1);
  const [a] = attempts;
  assert.equal(a.channel, "link");
  assert.equal(a.state, "approved");
  assert.equal(a.amount, paid.requested_amount);
  assert.equal(a.chargedAmount, paid.paid_amount);
  assert.ok(a.transactionId.split(",").length === 2, `two transactions, one per part: ${a.transactionId}`);
});

test("pay with the phone: Cancel cancels the link at the provider", async (t) => {
  const env = await setup(t, { cloud: true });
  const { page } = env;
  await order(env, { croissant: 1 }, "fr");
  await page.locator(tid("go-pay")).click();
  await page.locator(tid("pay-phone")).click();
  await page.locator(tid("phone-qr")).waitFor();
  const link = await scan(page);
  await page.locator(tid("cancel-payment")).click();
  await page.locator(tid("screen-declined")).waitFor();
  const cart = (await cloud(env, "/sim/carts")).find((c) => c.payment_link === link);
  assert.equal(cart.status, "ko");
});

test("pay with the phone: the screen in fr, en and es, without a WCAG 2.1 AA violation", async (t) => {
  const env = await setup(t, { cloud: true });
  const { page } = env;
  const found = [];
  const titles = new Set();
  for (const lang of ["fr", "en", "es"]) {
    await order(env, { croissant: 1 }, lang);
    await page.locator(tid("go-pay")).click();
    await page.locator(tid("pay-phone")).click();
    await page.locator(tid("phone-qr")).waitFor();
    titles.add(await page.locator("#phone-title").innerText());
    for (const v of await axe(page)) found.push(`${lang}: ${v}`);
    await page.locator(tid("cancel-payment")).click();
    await page.locator(tid("screen-declined")).waitFor();
    await page.locator(tid("cancel-order")).click();
    await page.locator(tid("screen-welcome")).waitFor();
  }
  assert.deepEqual(found, []);
  assert.equal(titles.size, 3, "the same title in two languages");
});

test("counter: staff send a link by SMS, the customer pays it, staff capture it", async (t) => {
  const env = await setup(t, { cloud: true });
  const { page } = env;
  await enterStaff(env);
  await openTab(env, "payments");
  await page.locator(tid("link-open")).click();
  await page.locator(tid("link-amount")).fill("24.50");
  await page.locator(tid("link-label")).fill("Commande Martin 12:30");
  await page.locator(tid("link-first")).fill("Claire");
  await page.locator(tid("link-last")).fill("Martin");
  await page.locator(tid("link-phone")).fill("+33 6 12 34 56 78");
  await page.locator(tid("link-authorise")).check();
  await page.locator(tid("link-send")).click();
  const detail = page.locator(tid("attempt-detail"));
  await detail.waitFor();
  const uuid = await detail.getAttribute("data-uuid");
  const link = (await page.locator(tid("attempt-link-url")).innerText()).trim();
  // The QR code staff can show at the counter is the link's.
  await page.locator(tid("attempt-link-qr")).waitFor();
  assert.equal(await scan(page), link);
  for (const v of await axe(page)) assert.fail(`staff link detail: ${v}`);
  await env.screenshot("staff-link-sent");

  const cart = (await cloud(env, "/sim/carts")).find((c) => c.payment_link === link);
  assert.ok(cart, "no cart for the link");
  assert.equal(cart.requested_amount, 2450);
  assert.ok(cart.cart_id.endsWith(uuid), `cart ${cart.cart_id} is not attempt ${uuid}'s`);
  await cloud(env, `/sim/carts/${cart.cart_id}/pay`, { kind: "card" });

  // The list, read again, shows the link paid and waiting for its capture.
  const row = page.locator(`${tid("attempt-row")}[data-uuid="${uuid}"]`);
  for (let i = 0; (await row.getAttribute("data-state")) !== "approved"; i++) {
    assert.ok(i < 100, "the paid link never showed approved");
    await page.locator(tid("filter-apply")).click();
    await page.waitForTimeout(100);
  }
  await row.click();
  await page.locator(`${tid("attempt-link-detail")}[data-provider-status="authorised"]`).waitFor();
  await page.locator(tid("action-capture")).click();
  await confirmYes(env, /24[.,]50/);
  await page.locator(`${tid("attempt-link-detail")}[data-provider-status="ok"]`).waitFor();
  assert.match(await page.locator(tid("staff-message")).innerText(), /Captured/);
  const after = (await cloud(env, "/sim/carts")).find((c) => c.cart_id === cart.cart_id);
  assert.equal(after.status, "ok");
  // The journal agrees with the cloud: approved, captured.
  await env.stopKiosk();
  const attempts = JSON.parse(execFileSync(binary(), ["attempts", "--data-dir", env.dataDir], { encoding: "utf8" }));
  const att = attempts.find((a) => a.idempotentUuid === uuid);
  assert.ok(att, "the link is not in the journal");
  assert.equal(att.state, "approved");
  assert.equal(att.providerStatus, "ok");
  assert.equal(att.providerId, link);
});
