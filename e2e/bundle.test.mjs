// End-to-end: what a customer's browser loads, in browser mode. A whole
// order paid by card runs on the files the first screen loaded (the
// customer bundle, under its budget gzipped); staff mode's chunk comes over
// the wire only when staff open it, same-origin, under the kiosk's
// Content-Security-Policy. (frontend/src/bundle.test.ts holds the same
// budget on the build output; this holds it on what a browser fetches.)

import { test } from "node:test";
import assert from "node:assert/strict";
import { gzipSync } from "node:zlib";
import { budgetBytes } from "../frontend/scripts/bundle.mjs";
import { enterStaff, order, setup } from "./harness.mjs";

const tid = (id) => `[data-testid="${id}"]`;

/**
 * watch opens a page of its own (a fresh browser context: nothing cached)
 * and records every file of the UI it fetches: the page itself and what
 * is under /assets/. The API and the menu's pictures are not code.
 */
async function watch(env) {
  const context = await env.page.context().browser().newContext({ viewport: { width: 1080, height: 1920 } });
  const page = await context.newPage();
  const origin = new URL(env.kioskURL).origin;
  const files = new Map();
  const reading = [];
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("response", (res) => {
    const url = new URL(res.url());
    if (url.origin !== origin || !(url.pathname === "/" || url.pathname.startsWith("/assets/"))) return;
    reading.push(
      res.body().then((body) => files.set(url.pathname, { status: res.status(), gzip: gzipSync(body, { level: 9 }).length, text: body.toString("utf8") })),
    );
  });
  await page.goto(env.kioskURL);
  return {
    env: { ...env, page },
    errors,
    /** loaded: the files fetched so far, each read whole. */
    async loaded() {
      await Promise.all(reading);
      return new Map(files);
    },
    close: () => context.close(),
  };
}

test("an order paid by card runs on the customer bundle; staff mode loads its own chunk when staff open it", async (t) => {
  const env = await setup(t);
  const w = await watch(env);
  t.after(() => w.close());
  const { page } = w.env;

  // The first screen, interactive: every control on it enabled.
  await page.locator(tid("screen-welcome")).waitFor({ timeout: 20000 });
  await page.waitForFunction(() => {
    const buttons = [...document.querySelectorAll('[data-testid="screen-welcome"] button')];
    return buttons.length > 0 && buttons.every((b) => !b.disabled);
  }, null, { timeout: 20000 });
  const first = await w.loaded();
  assert.ok(first.has("/"), "the page itself was not seen");
  assert.ok([...first.keys()].some((p) => p.endsWith(".js")), "no script was seen");
  for (const [path, f] of first) assert.equal(f.status, 200, path);
  const gzip = [...first.values()].reduce((n, f) => n + f.gzip, 0);
  const list = [...first].map(([p, f]) => `${p} ${f.gzip}`).join(", ");
  assert.ok(gzip < budgetBytes, `the first screen loaded ${gzip} bytes gzipped (${list}), over the budget of ${budgetBytes}`);
  for (const [path, f] of first) assert.ok(!f.text.includes("pin-pad"), `staff mode came with the first screen (${path})`);

  // A customer's whole order by card: nothing more comes.
  await order(w.env, { croissant: 1 });
  await page.locator(tid("go-pay")).click();
  await page.locator(tid("screen-payment-choice")).waitFor();
  await page.locator(tid("pay-card")).click();
  await page.locator(tid("screen-approved")).waitFor({ timeout: 20000 });
  await page.locator(tid("finish")).click();
  await page.locator(tid("screen-welcome")).waitFor();
  assert.deepEqual([...(await w.loaded()).keys()].sort(), [...first.keys()].sort());

  // Staff open staff mode: its chunk comes now, and it works.
  await enterStaff(w.env);
  const after = await w.loaded();
  const added = [...after].filter(([path]) => !first.has(path));
  assert.ok(added.some(([path, f]) => path.endsWith(".js") && f.text.includes("pin-pad")), `staff mode's chunk was not fetched: ${added.map(([p]) => p)}`);
  for (const [path, f] of added) assert.equal(f.status, 200, path);
  assert.deepEqual(w.errors, []);
});
