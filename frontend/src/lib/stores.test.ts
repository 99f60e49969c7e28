import { flushSync } from "svelte";
import { describe, expect, it, vi } from "vitest";
import { BridgeError } from "./bridge";
import { EventCheckout, EventStarted, EventTerminal } from "./contract";
import { Kiosk } from "./stores.svelte";
import { baseInfo, baseView, fakeTransport } from "../test/fakes";

describe("Kiosk stores", () => {
  it("fills info, catalog, checkout and terminal from the initial calls", async () => {
    const fake = fakeTransport({ ...baseView, phase: "welcome", language: "es" });
    fake.state.info = { ...baseInfo, demo: true, currency: "GBP" };
    const k = new Kiosk(fake.bridge);
    await k.start();
    expect(k.loaded).toBe(true);
    expect(k.info.currency).toBe("GBP");
    expect(k.catalog.categories.length).toBeGreaterThan(0);
    expect(k.checkout.phase).toBe("welcome");
    expect(k.terminal.state).toBe("connected");
    expect(k.language).toBe("es");
    expect(k.demo).toBe(true);
  });

  it("follows the events", async () => {
    const fake = fakeTransport();
    const k = new Kiosk(fake.bridge);
    await k.start();
    fake.emit(EventCheckout, { ...baseView, phase: "paying" });
    fake.emit(EventTerminal, { state: "unreachable", demo: true, ready: false, problem: "gone" });
    flushSync();
    expect(k.checkout.phase).toBe("paying");
    expect(k.terminal).toMatchObject({ state: "unreachable", problem: "gone" });
    expect(k.demo).toBe(true);
    k.stop();
    fake.emit(EventCheckout, { ...baseView, phase: "approved" });
    expect(k.checkout.phase).toBe("paying");
  });

  it("reads the menu again when the kiosk starts under a page already loaded (the desktop window)", async () => {
    const fake = fakeTransport();
    // The window loads before the kiosk runs: an empty menu at first.
    fake.answers.Catalog = () => ({ currency: "EUR", categories: [] });
    const k = new Kiosk(fake.bridge);
    await k.start();
    expect(k.catalog.categories).toHaveLength(0);
    delete fake.answers.Catalog;
    fake.emit(EventStarted, baseInfo);
    await vi.waitFor(() => expect(k.catalog.categories.length).toBeGreaterThan(0));
  });

  it("applies the view an intent answers", async () => {
    const fake = fakeTransport();
    const k = new Kiosk(fake.bridge);
    await k.start();
    fake.answers.AddItem = () => ({ ...baseView, total: 2250 });
    await k.act("AddItem", "croque", 1);
    expect(fake.calls.at(-1)).toEqual({ name: "AddItem", args: ["croque", 1] });
    expect(k.checkout.total).toBe(2250);
  });

  it("keeps a newer event over an older answer, but shows the answer's error", async () => {
    const fake = fakeTransport();
    const k = new Kiosk(fake.bridge);
    await k.start();
    fake.answers.Cancel = () => {
      // The approval overtakes Cancel's answer.
      fake.emit(EventCheckout, { ...baseView, phase: "approved" });
      return { ...baseView, phase: "paying", error: "error.wrong_phase" };
    };
    await k.act("Cancel");
    expect(k.checkout.phase).toBe("approved");
    expect(k.checkout.error).toBe("error.wrong_phase");
  });

  it("keeps a failed call as a typed failure, cleared by the next success", async () => {
    const fake = fakeTransport();
    const k = new Kiosk(fake.bridge);
    await k.start();
    fake.answers.Pay = () => {
      throw new BridgeError("Pay", "http", "journal unwritable", 500);
    };
    expect(await k.act("Pay", "card")).toBeUndefined();
    expect(k.failure).toMatchObject({ kind: "http", intent: "Pay" });
    expect(k.checkout.phase).toBe("ordering");
    await k.act("SetLanguage", "fr");
    expect(k.failure).toBeNull();
  });

  it("fetches the state again when the event stream reconnects", async () => {
    const fake = fakeTransport();
    let reconnect = () => {};
    fake.transport.onConnect = (h) => ((reconnect = h), () => {});
    const k = new Kiosk(fake.bridge);
    await k.start();
    fake.state.view = { ...baseView, phase: "approved" };
    reconnect();
    await new Promise((r) => setTimeout(r, 0));
    expect(k.checkout.phase).toBe("approved");
  });
});
