import { fireEvent, render, screen } from "@testing-library/svelte";
import { flushSync } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { Phase } from "../lib/contract";
import { kioskWith } from "../test/fakes";
import IdleGuard from "./IdleGuard.svelte";

describe("IdleGuard", () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it.each<Phase>(["ordering", "declined", "failed", "approved"])("abandons %s after idleSeconds, with a warning first", async (phase) => {
    const { context, fake } = kioskWith({ phase }, { info: { idleSeconds: 30 } });
    render(IdleGuard, { context });
    await vi.advanceTimersByTimeAsync(21_000);
    expect(screen.getByRole("alertdialog", { name: "Are you still there?" })).toBeTruthy();
    expect(fake.intents()).toEqual([]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(fake.intents()).toEqual(["Abandon"]);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(fake.intents()).toEqual(["Abandon"]);
  });

  it.each<Phase>(["paying", "canceling", "unknown", "unavailable", "welcome"])("never abandons %s", async (phase) => {
    const { context, fake } = kioskWith({ phase }, { info: { idleSeconds: 30 } });
    render(IdleGuard, { context });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(screen.queryByTestId("idle-warning")).toBeNull();
    expect(fake.intents()).toEqual([]);
  });

  it("starts counting again after a touch", async () => {
    const { context, fake } = kioskWith({ phase: "ordering" }, { info: { idleSeconds: 30 } });
    render(IdleGuard, { context });
    await vi.advanceTimersByTimeAsync(25_000);
    await fireEvent.click(screen.getByRole("button", { name: "I'm still here" }));
    await fireEvent.pointerDown(window);
    await vi.advanceTimersByTimeAsync(25_000);
    expect(fake.intents()).toEqual([]);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(fake.intents()).toEqual(["Abandon"]);
  });

  it("waits while staff are at the kiosk, then counts from the start", async () => {
    const { context, fake } = kioskWith({ phase: "ordering" }, { info: { idleSeconds: 30 } });
    const { rerender } = render(IdleGuard, { context, props: { paused: true } });
    await vi.advanceTimersByTimeAsync(600_000);
    expect(screen.queryByTestId("idle-warning")).toBeNull();
    expect(fake.intents()).toEqual([]);
    await rerender({ paused: false });
    await vi.advanceTimersByTimeAsync(25_000);
    expect(fake.intents()).toEqual([]);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(fake.intents()).toEqual(["Abandon"]);
  });

  it("does not abandon a payment that started while idle", async () => {
    const { context, fake, k } = kioskWith({ phase: "ordering" }, { info: { idleSeconds: 30 } });
    render(IdleGuard, { context });
    await vi.advanceTimersByTimeAsync(25_000);
    k.applyCheckout({ ...fake.state.view, phase: "paying" });
    flushSync();
    await vi.advanceTimersByTimeAsync(120_000);
    expect(fake.intents()).toEqual([]);
  });
});
