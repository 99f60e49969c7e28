// The one seam between the UI and the backend.
//
// Desktop: Wails injects the Go bindings as window.go.main.App and its
// runtime as window.runtime; every intent goes through one binding,
// App.Call(name, args), the kiosk's table (backend/kiosk/intents.go).
// Reaching them through window, rather than the generated wailsjs modules,
// keeps the frontend build independent of binding generation.
//
// Browser mode (`comptoir serve`): POST /api/<Intent> with a JSON array of the
// arguments, and server-sent events on /api/events.
//
// Tests: a fake transport (src/test/fakes.ts). `npm run dev` talks to a real
// `comptoir serve --demo` through the dev server's proxy (devproxy.ts).

import { EventCheckout, EventStarted, EventTerminal, type CheckoutView, type Info, type InfoView, type Intents, type TerminalView } from "./contract";
import { isLanguage } from "./i18n";

export type IntentName = keyof Intents;
export type IntentArgs<N extends IntentName> = Parameters<Intents[N]>;
export type IntentResult<N extends IntentName> = Awaited<ReturnType<Intents[N]>>;

/** The events the backend pushes, each carrying a full snapshot. */
export interface Events {
  [EventCheckout]: CheckoutView;
  [EventTerminal]: TerminalView;
  [EventStarted]: InfoView;
}
export type EventName = keyof Events;

/**
 * BridgeError is every failure of a call, typed so the UI can show it:
 * - "unavailable": no backend to talk to (network down, server gone);
 * - "http": the server answered with a non-2xx status;
 * - "backend": the Go method returned an error (journal, I/O...);
 * - "protocol": the answer was not the JSON we expect.
 * An intent the backend refuses in the current phase is not an error: it
 * comes back as a CheckoutView with `error` set.
 */
export class BridgeError extends Error {
  override readonly name = "BridgeError";
  constructor(
    readonly intent: string,
    readonly kind: "unavailable" | "http" | "backend" | "protocol",
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A Transport carries intents and events; desktop, browser and tests each have one. */
export interface Transport {
  readonly kind: "desktop" | "browser" | "test";
  call(name: string, args: unknown[]): Promise<unknown>;
  /** Subscribes to an event; returns the unsubscribe function. */
  on(event: string, handler: (data: unknown) => void): () => void;
  /** Called at every (re)connection of the event stream: missed snapshots should be fetched again. */
  onConnect?(handler: () => void): () => void;
  /** Called when the event stream is lost: what the screen shows may be stale. */
  onDisconnect?(handler: () => void): () => void;
}

/** The Go methods Wails binds on window.go.main.App. */
export type WailsBindings = Record<string, ((...args: unknown[]) => Promise<unknown>) | undefined>;
type Bound = WailsBindings;

interface WailsRuntime {
  EventsOn?(event: string, cb: (...data: unknown[]) => void): () => void;
  EventsOnMultiple?(event: string, cb: (...data: unknown[]) => void, max: number): () => void;
}

/** WailsHost is what Wails injects on window in the desktop shell. */
export interface WailsHost {
  go?: { main?: { App?: Bound } };
  runtime?: WailsRuntime;
}

/** describeError is the text of whatever a call rejected with. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (typeof err === "string") return err;
  try {
    return JSON.stringify(err);
  } catch {
    return String(err);
  }
}

/** errorText reads `comptoir serve`'s {"error": "..."} bodies, or plain text. */
export function errorText(body: string): string {
  try {
    const j = JSON.parse(body) as { error?: unknown };
    if (j && typeof j.error === "string") return j.error;
  } catch {
    // not JSON: the text itself
  }
  return body.trim();
}

/** desktopTransport calls the Wails binding Call(name, args) and listens to the Wails runtime's events. */
export function desktopTransport(host: WailsHost): Transport {
  return {
    kind: "desktop",
    async call(name, args) {
      const fn = host.go?.main?.App?.Call;
      if (typeof fn !== "function") {
        throw new BridgeError(name, "unavailable", "the desktop binding has no method Call");
      }
      try {
        return await fn(name, args);
      } catch (err) {
        // Wails rejects with the Go error's text.
        throw new BridgeError(name, "backend", describeError(err));
      }
    },
    on(event, handler) {
      const rt = host.runtime;
      const cb = (...data: unknown[]) => handler(data[0]);
      if (rt?.EventsOn) return rt.EventsOn(event, cb);
      if (rt?.EventsOnMultiple) return rt.EventsOnMultiple(event, cb, -1);
      return () => {};
    },
  };
}

export interface BrowserDeps {
  fetch: typeof fetch;
  EventSource: new (url: string) => EventSource;
  base?: string;
  /** Delay before reopening a stream the browser gave up on, ms. */
  reconnectMs?: number;
  setTimeout?: (fn: () => void, ms: number) => unknown;
}

/** browserTransport talks to `comptoir serve`: fetch for intents, one shared EventSource for events. */
export function browserTransport(deps: BrowserDeps): Transport {
  const base = deps.base ?? "/api/";
  const reconnectMs = deps.reconnectMs ?? 2000;
  const later = deps.setTimeout ?? ((fn: () => void, ms: number) => setTimeout(fn, ms));
  const handlers = new Map<string, Set<(data: unknown) => void>>();
  const connectHandlers = new Set<() => void>();
  const disconnectHandlers = new Set<() => void>();
  let source: EventSource | undefined;
  let reopening = false;

  function listen(es: EventSource, event: string) {
    es.addEventListener(event, (e) => {
      let data: unknown;
      try {
        data = JSON.parse((e as MessageEvent<string>).data);
      } catch {
        console.error(`bridge: event ${event} is not JSON`);
        return;
      }
      for (const h of handlers.get(event) ?? []) h(data);
    });
  }

  function open() {
    const es = new deps.EventSource(base + "events");
    source = es;
    for (const event of handlers.keys()) listen(es, event);
    es.addEventListener("open", () => {
      for (const h of connectHandlers) h();
    });
    es.addEventListener("error", () => {
      for (const h of disconnectHandlers) h();
      // The browser retries by itself after a dropped connection, but not
      // after an HTTP error status (CLOSED): then we reopen it ourselves.
      if (es.readyState === 2 && !reopening) {
        reopening = true;
        later(() => {
          reopening = false;
          if (source === es) open();
        }, reconnectMs);
      }
    });
  }

  function ensure() {
    if (!source) open();
  }

  return {
    kind: "browser",
    async call(name, args) {
      let res: Response;
      try {
        res = await deps.fetch(base + name, {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(args),
        });
      } catch (err) {
        throw new BridgeError(name, "unavailable", describeError(err));
      }
      const text = await res.text();
      if (!res.ok) {
        throw new BridgeError(name, "http", errorText(text) || `HTTP ${res.status}`, res.status);
      }
      if (text === "") return undefined;
      try {
        return JSON.parse(text);
      } catch {
        throw new BridgeError(name, "protocol", `the answer to ${name} is not JSON`, res.status);
      }
    },
    on(event, handler) {
      let set = handlers.get(event);
      if (!set) {
        set = new Set();
        handlers.set(event, set);
        if (source) listen(source, event);
      }
      set.add(handler);
      ensure();
      return () => set.delete(handler);
    },
    onConnect(handler) {
      connectHandlers.add(handler);
      ensure();
      return () => connectHandlers.delete(handler);
    },
    onDisconnect(handler) {
      disconnectHandlers.add(handler);
      ensure();
      return () => disconnectHandlers.delete(handler);
    },
  };
}

/** Bridge is the typed face of a Transport. */
export interface Bridge {
  readonly kind: Transport["kind"];
  call<N extends IntentName>(name: N, ...args: IntentArgs<N>): Promise<IntentResult<N>>;
  on<E extends EventName>(event: E, handler: (data: Events[E]) => void): () => void;
  onConnect(handler: () => void): () => void;
  /** onDisconnect: the event stream was lost (browser mode); onConnect follows when it is back. */
  onDisconnect(handler: () => void): () => void;
}

export function createBridge(t: Transport): Bridge {
  return {
    kind: t.kind,
    call: (name, ...args) => t.call(name, args) as Promise<never>,
    on: (event, handler) => t.on(event, handler as (data: unknown) => void),
    onConnect: (handler) => t.onConnect?.(handler) ?? (() => {}),
    onDisconnect: (handler) => t.onDisconnect?.(handler) ?? (() => {}),
  };
}

/** detect picks the transport for this window: Wails bindings when present, HTTP otherwise. */
export function detect(host: WailsHost & Partial<BrowserDeps> = globalThis as WailsHost): Transport {
  if (host.go?.main?.App) return desktopTransport(host);
  return browserTransport({
    fetch: (host.fetch ?? globalThis.fetch).bind(globalThis),
    EventSource: host.EventSource ?? globalThis.EventSource,
  });
}

let current: Bridge | undefined;

/** bridge is the process-wide bridge, detected at first use. */
export function bridge(): Bridge {
  current ??= createBridge(detect());
  return current;
}

/** call invokes an intent on the backend. Failures reject with a BridgeError. */
export function call<N extends IntentName>(name: N, ...args: IntentArgs<N>): Promise<IntentResult<N>> {
  return bridge().call(name, ...args);
}

/** on subscribes to a backend event; returns the unsubscribe function. */
export function on<E extends EventName>(event: E, handler: (data: Events[E]) => void): () => void {
  return bridge().on(event, handler);
}

// ---- The desktop shell's own bindings (outside the kiosk contract). ----

/** wailsBindings is the Go bindings Wails injects, undefined outside the desktop shell. */
export function wailsBindings(host: WailsHost = globalThis as WailsHost): WailsBindings | undefined {
  return host.go?.main?.App;
}

const desktopApp = wailsBindings;

/** version is the backend build's version, or "browser" outside the desktop. */
export async function version(host?: WailsHost): Promise<string> {
  const fn = desktopApp(host)?.Version;
  return fn ? String(await fn()) : "browser";
}

/** ready tells the desktop shell the first screen is painted so it can show the window. */
export async function ready(host?: WailsHost): Promise<void> {
  await desktopApp(host)?.Ready?.();
}

/** defaultInfo is what the UI assumes until (or unless) the backend answers Info(). */
export const defaultInfo: Info = {
  version: "",
  demo: false,
  languages: ["fr", "en", "es"],
  defaultLanguage: "fr",
  currency: "EUR",
  idleSeconds: 90,
  mode: "kiosk",
  phonePay: false,
};

/**
 * normalizeInfo fills what an older or partial backend leaves out, so the
 * screens always have languages, a currency and an idle timeout.
 */
export function normalizeInfo(raw: Partial<InfoView> | undefined | null): Info {
  const r = raw ?? {};
  const languages = (r.languages ?? []).filter(isLanguage);
  const langs = languages.length ? languages : defaultInfo.languages;
  return {
    version: r.version ?? defaultInfo.version,
    demo: r.demo ?? false,
    languages: langs,
    defaultLanguage: isLanguage(r.defaultLanguage) && langs.includes(r.defaultLanguage) ? r.defaultLanguage : (langs[0] ?? defaultInfo.defaultLanguage),
    currency: r.currency || defaultInfo.currency,
    idleSeconds: r.idleSeconds && r.idleSeconds > 0 ? r.idleSeconds : defaultInfo.idleSeconds,
    mode: r.mode ?? "kiosk",
    phonePay: r.phonePay ?? false,
  };
}
