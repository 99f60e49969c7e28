// Test doubles for the bridge: the UI is tested against the contract, not the backend.
import { vi } from "vitest";
import { createBridge, type Transport } from "../lib/bridge";
import type { CheckoutView, Info, TerminalView } from "../lib/contract";
import { Kiosk, kioskContextKey } from "../lib/stores.svelte";
import { testCatalog } from "./catalog";

export const baseView: CheckoutView = {
  phase: "ordering",
  language: "en",
  currency: "EUR",
  orderNumber: "42",
  orderId: "ord_1",
  lines: [
    { id: "l1", productId: "croque", name: { fr: "Croque-monsieur", en: "Croque-monsieur" }, qty: 2, unitPrice: 750, total: 1500, vatRate: 1000 },
  ],
  total: 1500,
  taxes: [{ rate: 1000, amount: 136 }],
  voucherEligible: 0,
  diningAsked: false,
};

export const baseInfo: Info = {
  version: "test",
  demo: false,
  languages: ["fr", "en", "es"],
  defaultLanguage: "en",
  currency: "EUR",
  idleSeconds: 60,
  mode: "kiosk",
  phonePay: false,
};

export const baseTerminal: TerminalView = { state: "connected", demo: false, ready: true, name: "T1", cardPay: true, phonePay: false };

/** fakeTransport answers intents from `answers` (or the current view) and lets tests push events. */
export function fakeTransport(view: CheckoutView = baseView) {
  const handlers = new Map<string, Set<(d: unknown) => void>>();
  const state = { view, info: baseInfo, terminal: baseTerminal };
  const calls: { name: string; args: unknown[] }[] = [];
  const answers: Record<string, (args: unknown[]) => unknown> = {};
  const call = vi.fn(async (name: string, args: unknown[]) => {
    calls.push({ name, args });
    if (answers[name]) return answers[name](args);
    switch (name) {
      case "Info":
        return state.info;
      case "Catalog":
        return testCatalog;
      case "Terminal":
        return state.terminal;
      default:
        return state.view;
    }
  });
  const t: Transport = {
    kind: "test",
    call,
    on(event, h) {
      let set = handlers.get(event);
      if (!set) handlers.set(event, (set = new Set()));
      set.add(h);
      return () => set.delete(h);
    },
  };
  return {
    transport: t,
    bridge: createBridge(t),
    call,
    calls,
    answers,
    state,
    emit(event: string, data: unknown) {
      for (const h of handlers.get(event) ?? []) h(data);
    },
    /** The intents called, by name, leaving out the initial fetches. */
    intents: () => calls.map((c) => c.name).filter((n) => !["Info", "Catalog", "Checkout", "Terminal"].includes(n)),
  };
}

/** kioskWith builds a Kiosk already holding the given snapshots, and its render context. */
export function kioskWith(view: Partial<CheckoutView> = {}, opts: { info?: Partial<Info>; terminal?: Partial<TerminalView> } = {}) {
  const fake = fakeTransport({ ...baseView, ...view });
  const k = new Kiosk(fake.bridge);
  k.info = { ...baseInfo, ...opts.info };
  k.catalog = testCatalog;
  k.terminal = { ...baseTerminal, ...opts.terminal };
  k.applyCheckout({ ...baseView, ...view });
  k.loaded = true;
  return { k, fake, context: new Map<unknown, unknown>([[kioskContextKey, k]]) };
}
