// A tiny fake backend for looking at the screens in a browser without the Go
// side: open the app with ?mock. It is a script, not the payment logic:
//
//   ?mock                    card payments are approved after a few seconds
//   ?mock=declined|failed|unknown|late-cancel   the payment ends that way
//                            (late-cancel: Cancel comes too late, charged anyway)
//   &phase=ordering|cart|paying|canceling|approved|declined|failed|unknown|unavailable
//                            start on that screen with a sample cart
//   &lang=fr|en|es           the language
//   &hold                    payments never end by themselves (for screenshots)

import type { Transport } from "./bridge";
import {
  EventCheckout,
  EventTerminal,
  type CatalogView,
  type CheckoutView,
  type Dining,
  type InfoView,
  type Language,
  type LineView,
  type PaymentMethod,
  type ProductView,
  type ReceiptChoice,
  type TerminalView,
} from "./contract";

const p = (
  id: string,
  fr: string,
  en: string,
  es: string,
  price: number,
  vatRate: number,
  mealVoucher = true,
  description?: [string, string, string],
  allergens?: string[],
): ProductView => ({
  id,
  name: { fr, en, es },
  description: description && { fr: description[0], en: description[1], es: description[2] },
  price,
  vatRate,
  mealVoucher,
  allergens,
});

export const mockCatalog: CatalogView = {
  currency: "EUR",
  categories: [
    {
      id: "mains",
      name: { fr: "Plats", en: "Mains", es: "Platos" },
      products: [
        p("croque", "Croque-monsieur", "Croque-monsieur", "Croque-monsieur", 750, 1000, true,
          ["Jambon, comté, béchamel", "Ham, comté cheese, béchamel", "Jamón, queso comté, bechamel"], ["gluten", "milk"]),
        p("quiche", "Quiche lorraine", "Quiche lorraine", "Quiche lorraine", 850, 1000, true,
          ["Lardons, crème, œufs", "Bacon, cream, eggs", "Beicon, nata, huevos"], ["gluten", "milk", "eggs"]),
        p("salade", "Salade niçoise", "Niçoise salad", "Ensalada nizarda", 1150, 1000, true,
          ["Thon, œuf, olives, haricots verts", "Tuna, egg, olives, green beans", "Atún, huevo, aceitunas, judías verdes"], ["fish", "eggs"]),
        p("soupe", "Soupe du jour", "Soup of the day", "Sopa del día", 600, 1000),
        p("sandwich", "Jambon-beurre", "Ham and butter baguette", "Bocadillo de jamón", 550, 1000, true, undefined, ["gluten", "milk"]),
        p("tarte", "Tarte aux légumes", "Vegetable tart", "Tarta de verduras", 900, 1000),
      ],
    },
    {
      id: "drinks",
      name: { fr: "Boissons", en: "Drinks", es: "Bebidas" },
      products: [
        p("eau", "Eau minérale 50 cl", "Still water 50 cl", "Agua mineral 50 cl", 200, 550),
        p("cafe", "Café", "Espresso", "Café solo", 180, 1000),
        p("the", "Thé", "Tea", "Té", 250, 1000),
        p("jus", "Jus d'orange pressé", "Fresh orange juice", "Zumo de naranja natural", 400, 550),
        p("biere", "Bière pression", "Draught beer", "Cerveza de barril", 550, 2000, false),
      ],
    },
    {
      id: "desserts",
      name: { fr: "Desserts", en: "Desserts", es: "Postres" },
      products: [
        p("tarte-citron", "Tarte au citron", "Lemon tart", "Tarta de limón", 450, 1000, true, undefined, ["gluten", "eggs", "milk"]),
        p("mousse", "Mousse au chocolat", "Chocolate mousse", "Mousse de chocolate", 400, 1000, true, undefined, ["eggs", "milk"]),
        p("fruit", "Salade de fruits", "Fruit salad", "Macedonia", 350, 550),
      ],
    },
  ],
};

export interface MockOptions {
  outcome?: "approved" | "declined" | "failed" | "unknown" | "late-cancel";
  phase?: string;
  language?: Language;
  hold?: boolean;
  /** Speeds the script up (tests): milliseconds per scripted second. */
  msPerSecond?: number;
}

export function mockOptionsFromURL(search: string): MockOptions | undefined {
  const q = new URLSearchParams(search);
  if (!q.has("mock")) return undefined;
  const outcome = q.get("mock") || "approved";
  const lang = q.get("lang");
  return {
    outcome: outcome as MockOptions["outcome"],
    phase: q.get("phase") ?? undefined,
    language: lang === "fr" || lang === "en" || lang === "es" ? lang : undefined,
    hold: q.has("hold"),
  };
}

/** mockTransport is a scripted backend behind the bridge's Transport. */
export function mockTransport(opts: MockOptions = {}): Transport & { emit(): void } {
  const ms = opts.msPerSecond ?? 1000;
  const info: InfoView = {
    version: "mock",
    demo: true,
    languages: ["fr", "en", "es"],
    defaultLanguage: opts.language ?? "fr",
    currency: "EUR",
    idleSeconds: 90,
    mode: "kiosk",
    phonePay: true,
  };
  const terminal: TerminalView = {
    state: opts.phase === "unavailable" ? "unreachable" : "connected",
    name: "Yavin-Sim-01",
    address: "http://127.0.0.1:16125/localapi/v4",
    demo: true,
    ready: opts.phase !== "unavailable",
    problem: opts.phase === "unavailable" ? "terminal 192.168.1.40 unreachable since 10:42 (dial tcp: i/o timeout)" : undefined,
    cardPay: opts.phase !== "unavailable",
    phonePay: true,
  };
  const products = new Map(mockCatalog.categories.flatMap((c) => c.products.map((p) => [p.id, p] as const)));
  let view: CheckoutView = fresh(info.defaultLanguage);
  let orders = 41;
  let timers: ReturnType<typeof setTimeout>[] = [];
  const handlers = new Map<string, Set<(d: unknown) => void>>();

  function fresh(language: string): CheckoutView {
    return { phase: "welcome", language, currency: "EUR", lines: [], total: 0, taxes: [], voucherEligible: 0, diningAsked: true };
  }
  function emit() {
    for (const h of handlers.get(EventCheckout) ?? []) h(structuredClone(view));
  }
  function later(seconds: number, fn: () => void) {
    timers.push(setTimeout(() => { fn(); emit(); }, seconds * ms));
  }
  function clearTimers() {
    timers.forEach(clearTimeout);
    timers = [];
  }
  function totals(lines: LineView[]) {
    const total = lines.reduce((s, l) => s + l.total, 0);
    const byRate = new Map<number, number>();
    for (const l of lines) byRate.set(l.vatRate, (byRate.get(l.vatRate) ?? 0) + Math.round((l.total * l.vatRate) / (10000 + l.vatRate)));
    const voucher = lines.filter((l) => products.get(l.productId)?.mealVoucher).reduce((s, l) => s + l.total, 0);
    view = { ...view, lines, total, taxes: [...byRate].sort((a, b) => a[0] - b[0]).map(([rate, amount]) => ({ rate, amount })), voucherEligible: Math.min(voucher, 2500) };
  }
  function add(productId: string, qty: number) {
    const prod = products.get(productId);
    if (!prod) return refuse("error.unknown_product");
    const lines = view.lines.map((l) => ({ ...l }));
    const line = lines.find((l) => l.productId === productId);
    if (line) { line.qty += qty; line.total = line.qty * line.unitPrice; }
    else lines.push({ id: `l${lines.length + 1}-${productId}`, productId, name: prod.name, qty, unitPrice: prod.price, total: prod.price * qty, vatRate: prod.vatRate });
    totals(lines);
    view.error = "";
  }
  function refuse(key: string) {
    view = { ...view, error: key };
  }
  function attempt(step: "card" | "voucher" | "phone", amount: number, method: PaymentMethod) {
    const paid = view.payment?.paid ?? 0;
    const uuid = "0192f0c4-8b1e-7c3a-9d2e-" + Math.floor(Math.random() * 1e12).toString(16).padStart(12, "0");
    view = {
      ...view,
      phase: "paying",
      error: "",
      payment: {
        method, step, amount, paid, due: view.total - paid, attemptUuid: uuid,
        deadline: new Date(Date.now() + (step === "phone" ? 300_000 : 60_000)).toISOString(),
        link: step === "phone" ? "https://pay.example.test/c/" + uuid.slice(-12) : undefined,
      },
    };
    if (opts.hold) return;
    later(5, () => settle());
  }
  function settle() {
    const pay = view.payment!;
    const outcome = opts.outcome ?? "approved";
    if (outcome === "approved" || outcome === "late-cancel") {
      const paid = pay.paid + pay.amount;
      if (pay.method === "voucher_then_card" && pay.step === "voucher" && paid < view.total) {
        view = { ...view, payment: { ...pay, paid, due: view.total - paid } };
        attempt("card", view.total - paid, pay.method);
        return;
      }
      approve(false);
    } else if (outcome === "declined" || outcome === "failed") {
      view = { ...view, phase: outcome };
    } else {
      view = { ...view, phase: "unknown", payment: { ...pay, message: "no answer from the terminal after 15 min" } };
    }
  }
  function approve(despiteCancel: boolean) {
    const pay = view.payment!;
    view = {
      ...view,
      phase: "approved",
      orderNumber: view.orderNumber ?? String(++orders),
      payment: { ...pay, paid: view.total, due: 0, chargedDespiteCancel: despiteCancel || undefined },
      receipt: { status: "" },
    };
  }

  function sample() {
    view = { ...fresh(opts.language ?? info.defaultLanguage), phase: "ordering", orderId: "ord_01J9", orderNumber: "42" };
    add("croque", 2);
    add("jus", 1);
    add("tarte-citron", 1);
    add("biere", 1);
  }

  // Start on the screen asked for.
  const start = opts.phase;
  if (start && start !== "welcome") {
    if (start === "unavailable") {
      view = { ...view, phase: "unavailable" };
    } else {
      sample();
      const pay = (): void => {
        view = {
          ...view,
          phase: "paying",
          payment: { method: "card", step: "card", amount: view.total, paid: 0, due: view.total, attemptUuid: "0192f0c4-8b1e-7c3a-9d2e-51a7c0e4d3b2", deadline: new Date(Date.now() + 47_000).toISOString() },
        };
      };
      if (start === "paying") pay();
      if (start === "canceling") { pay(); view.phase = "canceling"; }
      if (start === "approved") { pay(); approve(false); }
      if (start === "late-cancel") { pay(); approve(true); }
      if (start === "declined" || start === "failed") { pay(); view.phase = start; }
      if (start === "unknown") { pay(); view.phase = "unknown"; view.payment!.message = "no answer from the terminal after 15 min"; }
    }
  }

  const intents: Record<string, (...a: never[]) => unknown> = {
    Info: () => info,
    Catalog: () => mockCatalog,
    Checkout: () => view,
    Terminal: () => terminal,
    Start: (language: Language) => {
      if (view.phase !== "welcome") return refuse("error.wrong_phase");
      view = { ...fresh(language), phase: "dining", diningAsked: true, orderId: "ord_" + Date.now().toString(36) };
    },
    ChooseDining: (dining: Dining) => {
      if (view.phase !== "dining" && view.phase !== "ordering") return refuse("error.wrong_phase");
      view = { ...view, phase: "ordering", dining };
    },
    SetLanguage: (language: Language) => { view = { ...view, language }; },
    AddItem: (productId: string, qty: number) => (view.phase === "ordering" ? add(productId, qty) : refuse("error.wrong_phase")),
    SetQuantity: (lineId: string, qty: number) => {
      if (view.phase !== "ordering") return refuse("error.wrong_phase");
      const lines = view.lines.flatMap((l) => (l.id !== lineId ? [l] : qty <= 0 ? [] : [{ ...l, qty, total: qty * l.unitPrice }]));
      totals(lines);
      view.error = "";
    },
    Pay: (method: PaymentMethod) => {
      if (view.phase !== "ordering") return refuse("error.wrong_phase");
      if (!view.lines.length) return refuse("error.cart_empty");
      if (method === "voucher_then_card") attempt("voucher", view.voucherEligible, method);
      else if (method === "phone") attempt("phone", view.total, method);
      else attempt("card", view.total, method);
    },
    Cancel: () => {
      if (view.phase !== "paying") return refuse("error.wrong_phase");
      clearTimers();
      view = { ...view, phase: "canceling" };
      later(3, () => {
        if (opts.outcome === "late-cancel") approve(true);
        else view = { ...fresh(view.language) };
      });
    },
    Retry: () => {
      if (view.phase !== "declined" && view.phase !== "failed") return refuse("error.wrong_phase");
      const pay = view.payment!;
      opts.outcome = "approved";
      attempt(pay.step, pay.amount, pay.method);
    },
    PrintLink: () => {
      if (view.phase !== "paying" || !view.payment?.link) return refuse("error.wrong_phase");
      // Printed: the customer pays at their table; the kiosk is the next customer's.
      clearTimers();
      view = fresh(view.language);
    },
    PayRestByCard: () => {
      if (view.phase !== "declined") return refuse("error.wrong_phase");
      opts.outcome = "approved";
      attempt("card", view.total - (view.payment?.paid ?? 0), "card");
    },
    CancelOrder: () => { clearTimers(); view = fresh(view.language); },
    ChooseReceipt: (choice: ReceiptChoice) => {
      if (view.phase !== "approved") return refuse("error.wrong_phase");
      view = { ...view, receipt: { choice, status: "working" } };
      later(choice === "none" ? 0.2 : 2.5, () => { view = { ...view, receipt: { choice, status: "done" } }; });
    },
    Finish: () => { clearTimers(); view = fresh(info.defaultLanguage); },
    Abandon: () => {
      if (view.phase === "paying" || view.phase === "canceling") return refuse("error.wrong_phase");
      clearTimers();
      view = fresh(info.defaultLanguage);
    },
  };

  return {
    kind: "mock",
    async call(name, args) {
      const fn = intents[name];
      if (!fn) throw new Error(`mock: no intent ${name}`);
      const before = JSON.stringify(view);
      const r = (fn as (...a: unknown[]) => unknown)(...args);
      if (r !== undefined && name !== "Start" && name !== "SetLanguage") return structuredClone(r);
      const out = structuredClone(view);
      if (JSON.stringify(view) !== before && !view.error) queueMicrotask(emit);
      // A refused intent answers with its error but keeps no error in the state.
      if (view.error) view = { ...view, error: "" };
      return out;
    },
    on(event, handler) {
      let set = handlers.get(event);
      if (!set) handlers.set(event, (set = new Set()));
      set.add(handler);
      if (event === EventTerminal) queueMicrotask(() => handler(structuredClone(terminal)));
      return () => set.delete(handler);
    },
    emit,
  };
}
