// The UI's state: the backend's snapshots, as Svelte 5 runes. They are filled
// by the initial calls and then by events; the UI never computes payment
// state itself, it renders these.

import { getContext, setContext } from "svelte";
import { BridgeError, normalizeInfo, type Bridge, type IntentArgs, type IntentName } from "./bridge";
import {
  EventCheckout,
  EventStarted,
  EventTerminal,
  type CatalogView,
  type CheckoutView,
  type Info,
  type Language,
  type TerminalView,
} from "./contract";
import { isLanguage, money, translate, type MessageKey, type Params } from "./i18n";

/** Intents that answer with a CheckoutView. */
type CheckoutIntent = {
  [N in IntentName]: Awaited<ReturnType<import("./contract").Intents[N]>> extends CheckoutView ? N : never;
}[IntentName];

export const emptyCheckout: CheckoutView = {
  phase: "welcome",
  language: "fr",
  currency: "EUR",
  lines: [],
  total: 0,
  taxes: [],
  voucherEligible: 0,
  diningAsked: false,
};

export const emptyTerminal: TerminalView = { state: "searching", demo: false, ready: false, cardPay: false, phonePay: false };

export class Kiosk {
  info = $state<Info>(normalizeInfo(undefined));
  catalog = $state<CatalogView>({ currency: "EUR", categories: [] });
  checkout = $state<CheckoutView>(emptyCheckout);
  terminal = $state<TerminalView>(emptyTerminal);
  /** The last failed call (network, backend error), shown until dismissed or a call succeeds. */
  failure = $state<BridgeError | null>(null);
  /** True once the first snapshots are in. */
  loaded = $state(false);
  /** The server cannot be reached (browser mode): nothing shown is current. */
  offline = $state(false);
  /** Intents in flight, to disable the buttons that sent them. */
  busy = $state(0);
  /**
   * Accessibility mode, for this customer: the flow in the lower half of
   * the screen, larger text and targets, high contrast, no motion. The
   * next customer starts without it (App turns it off at the welcome).
   */
  accessible = $state(false);
  /** The cart's suggestions were shown to this customer: not again (reset at the welcome). */
  suggested = $state(false);

  /** The display language: the checkout's, else the installation's default. */
  language: Language = $derived(
    isLanguage(this.checkout.language) && this.info.languages.includes(this.checkout.language)
      ? this.checkout.language
      : this.info.defaultLanguage,
  );
  currency: string = $derived(this.checkout.currency || this.catalog.currency || this.info.currency);
  demo: boolean = $derived(this.info.demo || this.terminal.demo);

  #events = 0;
  #off: (() => void)[] = [];

  constructor(readonly bridge: Bridge) {}

  /** start fetches the first snapshots and subscribes to the events. */
  async start(): Promise<void> {
    this.#off.push(
      this.bridge.on(EventCheckout, (v) => this.applyCheckout(v)),
      this.bridge.on(EventTerminal, (v) => this.applyTerminal(v)),
      // The kiosk (re)started under this page: the menu and the info too.
      this.bridge.on(EventStarted, () => void this.refresh(true)),
      // After a reconnection, events may have been missed: fetch the state again.
      this.bridge.onConnect(() => {
        this.offline = false;
        if (this.loaded) void this.refresh();
      }),
      this.bridge.onDisconnect(() => (this.offline = true)),
    );
    await this.refresh(true);
  }

  stop(): void {
    for (const off of this.#off.splice(0)) off();
  }

  async refresh(withStatic = false): Promise<void> {
    const tasks: Promise<unknown>[] = [
      this.#guard("Checkout", async () => {
        const before = this.#events;
        const v = await this.bridge.call("Checkout");
        if (this.#events === before) this.applyCheckout(v);
      }),
      this.#guard("Terminal", async () => this.applyTerminal(await this.bridge.call("Terminal"))),
    ];
    if (withStatic) {
      tasks.push(
        this.#guard("Info", async () => (this.info = normalizeInfo(await this.bridge.call("Info")))),
        this.#guard("Catalog", async () => {
          const c = await this.bridge.call("Catalog");
          this.catalog = { currency: c?.currency || this.info.currency, categories: c?.categories ?? [] };
        }),
      );
    }
    await Promise.all(tasks);
    this.loaded = true;
  }

  applyCheckout(v: CheckoutView): void {
    if (!v || typeof v !== "object" || !v.phase) return;
    this.#events++;
    this.checkout = { ...v, lines: v.lines ?? [], taxes: v.taxes ?? [] };
  }

  applyTerminal(v: TerminalView): void {
    if (!v || typeof v !== "object" || !v.state) return;
    this.terminal = v;
  }

  /**
   * act sends an intent and applies the CheckoutView it answers. If an event
   * arrived while the call was out, the event is newer than the answer: only
   * the answer's error (a refused intent) is kept.
   */
  async act<N extends CheckoutIntent>(name: N, ...args: IntentArgs<N>): Promise<CheckoutView | undefined> {
    const before = this.#events;
    this.busy++;
    try {
      const v = (await this.bridge.call(name, ...args)) as CheckoutView;
      this.failure = null;
      this.offline = false;
      if (this.#events === before) {
        this.applyCheckout(v);
      } else if (v?.error) {
        this.checkout = { ...this.checkout, error: v.error };
      }
      return v;
    } catch (err) {
      this.failure = err instanceof BridgeError ? err : new BridgeError(name, "backend", String(err));
      if (this.failure.kind === "unavailable") this.offline = true;
      return undefined;
    } finally {
      this.busy--;
    }
  }

  dismissError(): void {
    this.failure = null;
    if (this.checkout.error) this.checkout = { ...this.checkout, error: "" };
  }

  t(key: MessageKey, params?: Params): string {
    return translate(this.language, key, params);
  }

  money(cents: number): string {
    return money(cents, this.currency, this.language);
  }

  async #guard(name: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.failure = err instanceof BridgeError ? err : new BridgeError(name, "backend", String(err));
    }
  }
}

const key = Symbol("kiosk");

export function provideKiosk(k: Kiosk): Kiosk {
  setContext(key, k);
  return k;
}

export function useKiosk(): Kiosk {
  const k = getContext<Kiosk | undefined>(key);
  if (!k) throw new Error("useKiosk outside a kiosk context");
  return k;
}

export const kioskContextKey = key;
