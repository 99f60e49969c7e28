import { describe, expect, it, vi } from "vitest";
import {
  BridgeError,
  browserTransport,
  createBridge,
  desktopTransport,
  detect,
  normalizeInfo,
  ready,
  version,
  type WailsHost,
} from "./bridge";
import { EventCheckout, EventTerminal, type CheckoutView } from "./contract";
import { emptyCheckout } from "./stores.svelte";

const view: CheckoutView = { ...emptyCheckout, phase: "ordering", language: "en" };

describe("desktop shell bindings", () => {
  it("asks the desktop binding for the version", async () => {
    const host = { go: { main: { App: { Version: async () => "1.2.3", Ready: async () => {} } } } };
    expect(await version(host)).toBe("1.2.3");
  });

  it("falls back to browser mode without Wails bindings", async () => {
    expect(await version({})).toBe("browser");
    expect(await version({ go: {} })).toBe("browser");
    await expect(ready({})).resolves.toBeUndefined();
  });

  it("reports readiness to the desktop shell", async () => {
    const Ready = vi.fn(async () => {});
    await ready({ go: { main: { App: { Version: async () => "", Ready } } } });
    expect(Ready).toHaveBeenCalledOnce();
  });

  it("fills what a partial Info leaves out", () => {
    expect(normalizeInfo(undefined)).toMatchObject({ languages: ["fr", "en", "es"], defaultLanguage: "fr", currency: "EUR", idleSeconds: 90 });
    const i = normalizeInfo({ languages: ["en", "es"], defaultLanguage: "fr", currency: "GBP", idleSeconds: 0, demo: true });
    expect(i).toMatchObject({ languages: ["en", "es"], defaultLanguage: "en", currency: "GBP", idleSeconds: 90, demo: true });
  });
});

describe("desktop transport", () => {
  function host() {
    const listeners = new Map<string, (...d: unknown[]) => void>();
    const off = vi.fn();
    // App.Call(name, args), as app.go binds it: one method for every intent.
    const Call = vi.fn(async (name: unknown, _args: unknown) => {
      if (name === "AddItem") return { ...view, total: 750 };
      throw "journal: disk full";
    });
    const App = { Call };
    const h: WailsHost = {
      go: { main: { App } },
      runtime: {
        EventsOn: (event, cb) => {
          listeners.set(event, cb);
          return off;
        },
      },
    };
    return { h, App, listeners, off };
  }

  it("calls window.go.main.App.Call(name, args) with the arguments", async () => {
    const { h, App } = host();
    const b = createBridge(detect(h));
    expect(b.kind).toBe("desktop");
    const v = await b.call("AddItem", "croque", 2);
    expect(App.Call).toHaveBeenCalledWith("AddItem", ["croque", 2]);
    expect(v.total).toBe(750);
  });

  it("turns a Go error into a BridgeError", async () => {
    const { h } = host();
    const b = createBridge(desktopTransport(h));
    const err = await b.call("Pay", "card").catch((e) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).toMatchObject({ intent: "Pay", kind: "backend", message: "journal: disk full" });
  });

  it("rejects a call when the binding lacks Call", async () => {
    const h: WailsHost = { go: { main: { App: { Version: async () => "1" } } } };
    const err = await createBridge(desktopTransport(h)).call("Finish").catch((e) => e);
    expect(err).toMatchObject({ kind: "unavailable", intent: "Finish" });
  });

  it("subscribes with window.runtime.EventsOn", () => {
    const { h, listeners, off } = host();
    const b = createBridge(desktopTransport(h));
    const got: CheckoutView[] = [];
    const unsubscribe = b.on(EventCheckout, (v) => got.push(v));
    listeners.get(EventCheckout)!(view);
    expect(got).toEqual([view]);
    unsubscribe();
    expect(off).toHaveBeenCalled();
  });
});

class FakeEventSource {
  static all: FakeEventSource[] = [];
  readyState = 0;
  listeners = new Map<string, ((e: { data?: string }) => void)[]>();
  constructor(readonly url: string) {
    FakeEventSource.all.push(this);
  }
  addEventListener(type: string, fn: (e: { data?: string }) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  dispatch(type: string, data?: unknown) {
    for (const fn of this.listeners.get(type) ?? []) fn({ data: data === undefined ? undefined : JSON.stringify(data) });
  }
  close() {
    this.readyState = 2;
  }
}

describe("browser transport", () => {
  function setup(respond: (url: string, init: RequestInit) => Response | Promise<Response>) {
    FakeEventSource.all = [];
    const fetch = vi.fn(async (url: string | URL | Request, init?: RequestInit) => respond(String(url), init!));
    const pending: (() => void)[] = [];
    const t = browserTransport({
      fetch: fetch as unknown as typeof globalThis.fetch,
      EventSource: FakeEventSource as unknown as new (url: string) => EventSource,
      setTimeout: (fn) => pending.push(fn),
    });
    return { b: createBridge(t), fetch, pending };
  }

  it("POSTs the arguments as a JSON array to /api/<Name>", async () => {
    const { b, fetch } = setup(() => new Response(JSON.stringify({ ...view, total: 1500 }), { status: 200 }));
    const v = await b.call("AddItem", "quiche", 3);
    expect(v.total).toBe(1500);
    expect(fetch).toHaveBeenCalledWith("/api/AddItem", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: '["quiche",3]',
    });
    await b.call("Checkout");
    expect(fetch.mock.calls[1][1]?.body).toBe("[]");
  });

  it("surfaces HTTP errors with their status and text", async () => {
    const { b } = setup(() => new Response("journal unwritable\n", { status: 500 }));
    const err = await b.call("Pay", "card").catch((e) => e);
    expect(err).toBeInstanceOf(BridgeError);
    expect(err).toMatchObject({ kind: "http", status: 500, message: "journal unwritable", intent: "Pay" });
  });

  it("reads the server's JSON error body", async () => {
    const { b } = setup(() => new Response('{"error":"unknown intent Nope"}', { status: 404 }));
    await expect(b.call("Checkout")).rejects.toMatchObject({ kind: "http", status: 404, message: "unknown intent Nope" });
  });

  it("surfaces a network failure as unavailable", async () => {
    const { b } = setup(() => {
      throw new TypeError("Failed to fetch");
    });
    await expect(b.call("Checkout")).rejects.toMatchObject({ kind: "unavailable", message: "Failed to fetch" });
  });

  it("surfaces a non-JSON answer as a protocol error", async () => {
    const { b } = setup(() => new Response("<html>", { status: 200 }));
    await expect(b.call("Checkout")).rejects.toMatchObject({ kind: "protocol" });
  });

  it("listens to /api/events with one EventSource for every event", () => {
    const { b } = setup(() => new Response("{}"));
    const checkouts: unknown[] = [];
    const terminals: unknown[] = [];
    b.on(EventCheckout, (v) => checkouts.push(v));
    b.on(EventTerminal, (v) => terminals.push(v));
    expect(FakeEventSource.all).toHaveLength(1);
    const es = FakeEventSource.all[0];
    expect(es.url).toBe("/api/events");
    es.dispatch(EventCheckout, view);
    es.dispatch(EventTerminal, { state: "connected", demo: true, ready: true });
    expect(checkouts).toEqual([view]);
    expect(terminals).toEqual([{ state: "connected", demo: true, ready: true }]);
  });

  it("stops delivering to an unsubscribed handler", () => {
    const { b } = setup(() => new Response("{}"));
    const got: unknown[] = [];
    const off = b.on(EventCheckout, (v) => got.push(v));
    off();
    FakeEventSource.all[0].dispatch(EventCheckout, view);
    expect(got).toEqual([]);
  });

  it("reopens a stream the browser closed, and tells who must refetch", () => {
    const { b, pending } = setup(() => new Response("{}"));
    const got: unknown[] = [];
    const connects = vi.fn();
    b.on(EventCheckout, (v) => got.push(v));
    b.onConnect(connects);
    const first = FakeEventSource.all[0];
    first.dispatch("open");
    expect(connects).toHaveBeenCalledTimes(1);

    // A dropped connection the browser retries by itself: nothing to do.
    first.readyState = 0;
    first.dispatch("error");
    expect(pending).toHaveLength(0);

    // An HTTP error closes it for good: we reopen after a delay.
    first.readyState = 2;
    first.dispatch("error");
    expect(pending).toHaveLength(1);
    pending[0]();
    expect(FakeEventSource.all).toHaveLength(2);
    const second = FakeEventSource.all[1];
    second.dispatch("open");
    expect(connects).toHaveBeenCalledTimes(2);
    second.dispatch(EventCheckout, view);
    expect(got).toEqual([view]);
  });
});
