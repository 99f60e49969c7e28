import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { flushSync } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import App from "../App.svelte";
import { EventCheckout } from "../lib/contract";
import type { Setting } from "../lib/staffContract";
import { baseView, fakeTransport } from "../test/fakes";
import { approvedAttempt, baseAbout, baseSession, fakeStaff, fail, ok, staffWith, traitsOf } from "../test/staffFakes";
import StaffEntry from "./StaffEntry.svelte";
import StaffRoot from "./StaffRoot.svelte";

async function typePin(pin: string) {
  for (const d of pin) await fireEvent.click(screen.getByTestId(`pin-key-${d}`));
}

/** A staff store already unlocked, and staff mode rendered over its context, with its way in. */
async function unlocked(opts: Parameters<typeof staffWith>[0] = {}) {
  const w = staffWith(opts);
  await w.s.open("en", "EUR");
  expect(await w.s.unlock("1234")).toBeNull();
  const r = render(StaffEntry, { context: w.context, props: { door: w.door } });
  // The first tab's own loading is done.
  await vi.waitFor(() => expect(w.s.busy + w.s.loading).toBe(0));
  return { ...w, ...r };
}

describe("PIN pad", () => {
  it("shows dots, never the digits, and unlocks with the PIN", async () => {
    const { s, staff, context } = staffWith();
    await s.open("en");
    render(StaffRoot, { context });
    const pad = screen.getByTestId("pin-pad");
    expect(screen.getByRole("dialog", { name: "Staff access" })).toBe(pad);
    await typePin("1234");
    const dots = screen.getByTestId("pin-dots");
    expect(dots.dataset.count).toBe("4");
    expect(dots.getAttribute("aria-label")).toBe("4 of at most 8 digits entered");
    expect(dots.textContent!.trim()).toBe("");
    expect(pad.querySelector("input")).toBeNull();
    expect(within(pad).queryByText(/1234/)).toBeNull();
    await fireEvent.click(screen.getByTestId("pin-ok"));
    expect(await screen.findByTestId("staff-shell")).toBeTruthy();
    expect(screen.queryByTestId("pin-pad")).toBeNull();
    expect(staff.last("Unlock")?.args).toEqual(["1234", "corner"]);
  });

  it("tells the backend which gesture opened the pad: the corner, or the keyboard shortcut", async () => {
    const { staff, context, door } = staffWith();
    render(StaffEntry, { context, props: { door } });
    for (let i = 0; i < 5; i++) await fireEvent.pointerDown(screen.getByTestId("staff-corner"));
    await screen.findByTestId("pin-pad");
    await typePin("0000");
    await fireEvent.click(screen.getByTestId("pin-ok"));
    await vi.waitFor(() => expect(staff.last("Unlock")?.args).toEqual(["0000", "corner"]));
    await fireEvent.click(screen.getByTestId("pin-cancel"));
    await fireEvent.keyDown(window, { key: "s", code: "KeyS", ctrlKey: true, altKey: true });
    await screen.findByTestId("pin-pad");
    await typePin("1234");
    await fireEvent.click(screen.getByTestId("pin-ok"));
    expect(await screen.findByTestId("staff-shell")).toBeTruthy();
    expect(staff.last("Unlock")?.args).toEqual(["1234", "shortcut"]);
  });

  it("says a wrong PIN, clears the dots and opens nothing", async () => {
    const { s, context } = staffWith();
    await s.open("en");
    render(StaffRoot, { context });
    await typePin("0000");
    await fireEvent.click(screen.getByTestId("pin-ok"));
    expect((await screen.findByTestId("pin-error")).textContent).toBe("Wrong PIN. 2 more wrong PIN(s) and the pad locks.");
    expect(screen.getByTestId("pin-dots").dataset.count).toBe("0");
    expect(screen.queryByTestId("staff-shell")).toBeNull();
    expect(s.session).toBeNull();
  });

  it("shows the demo hint only in demo mode without a PIN", async () => {
    const { s, staff, context } = staffWith({ answers: { Gate: () => ({ hasPin: false, demo: true }) } });
    await s.open("en");
    const { unmount } = render(StaffRoot, { context });
    expect(screen.getByTestId("pin-demo-hint").textContent).toBe("Demo: PIN 1234");
    expect(screen.queryByTestId("pin-setup")).toBeNull();
    unmount();
    staff.answers.Gate = () => ({ hasPin: true, demo: true });
    await s.refreshGate();
    render(StaffRoot, { context });
    expect(screen.queryByTestId("pin-demo-hint")).toBeNull();
  });

  it("asks for a new PIN twice at first run, and sets it", async () => {
    const { s, staff, context } = staffWith({ answers: { Gate: () => ({ hasPin: false, demo: false }) } });
    await s.open("en");
    render(StaffRoot, { context });
    expect(screen.getByTestId("pin-setup").dataset.step).toBe("enter");
    await typePin("2468");
    await fireEvent.click(screen.getByTestId("pin-ok"));
    expect(screen.getByTestId("pin-setup").dataset.step).toBe("confirm");
    await typePin("2469");
    await fireEvent.click(screen.getByTestId("pin-ok"));
    expect(screen.getByTestId("pin-error").textContent).toBe("The two PINs are different. Start again.");
    expect(screen.getByTestId("pin-setup").dataset.step).toBe("enter");
    expect(staff.names()).not.toContain("SetPIN");
    await typePin("2468");
    await fireEvent.click(screen.getByTestId("pin-ok"));
    await typePin("2468");
    await fireEvent.click(screen.getByTestId("pin-ok"));
    expect(await screen.findByTestId("staff-shell")).toBeTruthy();
    expect(staff.last("SetPIN")?.args).toEqual(["2468", "corner"]);
    expect(staff.names()).not.toContain("Unlock");
  });

  it("shows no mode until this opening's Gate answered, though the last one said no PIN", async () => {
    const { s, staff, context } = staffWith({ answers: { Gate: () => ({ hasPin: false, demo: false }) } });
    await s.open("en");
    s.cancelPad();
    // The PIN was set meanwhile; this time the Gate answer is slow.
    let answer: (g: unknown) => void = () => {};
    staff.answers.Gate = () => new Promise((resolve) => (answer = resolve));
    const opening = s.open("en");
    render(StaffRoot, { context });
    const pad = screen.getByTestId("pin-pad");
    expect(pad.dataset.mode).toBe("pending");
    expect(screen.queryByTestId("pin-setup")).toBeNull();
    expect((screen.getByTestId("pin-key-1") as HTMLButtonElement).disabled).toBe(true);
    answer({ hasPin: true, demo: false });
    await opening;
    await vi.waitFor(() => expect(pad.dataset.mode).toBe("unlock"));
    expect((screen.getByTestId("pin-key-1") as HTMLButtonElement).disabled).toBe(false);
  });

  it("speaks the kiosk's current language", async () => {
    const { s, context } = staffWith();
    await s.open("fr");
    render(StaffRoot, { context });
    expect(screen.getByRole("dialog", { name: "Accès personnel" })).toBeTruthy();
    expect(screen.getByTestId("pin-cancel").textContent).toBe("Annuler");
  });

  describe("lockout", () => {
    beforeEach(() => vi.useFakeTimers({ now: new Date("2025-01-10T12:00:00Z") }));
    afterEach(() => vi.useRealTimers());

    it("counts down from retryAfterMs with the keys disabled, then lets staff try again", async () => {
      const { s, staff, context } = staffWith({
        answers: { Unlock: () => fail("ELOCKED_OUT", "Too many wrong PINs: the PIN pad is locked for 5 seconds.", { retryAfterMs: 5000 }) },
      });
      await s.open("en");
      render(StaffRoot, { context });
      await typePin("9999");
      await fireEvent.click(screen.getByTestId("pin-ok"));
      await vi.waitFor(() => expect(screen.getByTestId("pin-locked")).toBeTruthy());
      const locked = screen.getByTestId("pin-locked");
      expect(locked.dataset.seconds).toBe("5");
      expect(locked.textContent).toBe("Too many wrong PINs. Try again in 5 s.");
      for (const id of ["pin-key-1", "pin-key-0", "pin-clear", "pin-ok"]) {
        expect((screen.getByTestId(id) as HTMLButtonElement).disabled, id).toBe(true);
      }
      expect((screen.getByTestId("pin-cancel") as HTMLButtonElement).disabled).toBe(false);
      await fireEvent.click(screen.getByTestId("pin-key-1"));
      expect(screen.getByTestId("pin-dots").dataset.count).toBe("0");

      await vi.advanceTimersByTimeAsync(3000);
      expect(screen.getByTestId("pin-locked").dataset.seconds).toBe("2");
      await vi.advanceTimersByTimeAsync(2500);
      expect(screen.queryByTestId("pin-locked")).toBeNull();
      expect((screen.getByTestId("pin-key-1") as HTMLButtonElement).disabled).toBe(false);
      staff.answers.Unlock = () => ok({ id: "sid-2", who: "staff:sid-2", expiresAt: "2099-01-01T00:00:00Z" });
      await typePin("1234");
      await fireEvent.click(screen.getByTestId("pin-ok"));
      await vi.waitFor(() => expect(screen.getByTestId("staff-shell")).toBeTruthy());
    });
  });

  describe("recovery code", () => {
    beforeEach(() => vi.useFakeTimers({ now: new Date("2025-01-10T12:00:00Z") }));
    afterEach(() => vi.useRealTimers());

    it("takes the 16-digit recovery code on a locked pad, which lifts the lock; the PIN is asked next", async () => {
      const { s, staff, context } = staffWith({
        answers: {
          Unlock: () => fail("ELOCKED_OUT", "Too many wrong PINs: the PIN pad is locked here for 15 minutes.", { retryAfterMs: 900_000 }),
          ClearLockout: ([code]) => (code === "1234567890123456" ? null : fail("EWRONG_PIN", "The recovery code is not right.")),
        },
      });
      await s.open("en");
      render(StaffRoot, { context });
      expect(screen.queryByTestId("pin-recovery")).toBeNull();
      await typePin("9999");
      await fireEvent.click(screen.getByTestId("pin-ok"));
      await vi.waitFor(() => expect(screen.getByTestId("pin-locked")).toBeTruthy());
      expect((screen.getByTestId("pin-key-1") as HTMLButtonElement).disabled).toBe(true);

      await fireEvent.click(screen.getByTestId("pin-recovery"));
      expect(screen.getByText("Enter the 16-digit recovery code")).toBeTruthy();
      expect((screen.getByTestId("pin-key-1") as HTMLButtonElement).disabled).toBe(false);
      await typePin("12345");
      await fireEvent.click(screen.getByTestId("pin-ok"));
      expect(screen.getByTestId("pin-error").textContent).toBe("A recovery code has 16 digits.");
      expect(staff.names()).not.toContain("ClearLockout");
      await typePin("1111111111111111");
      await fireEvent.click(screen.getByTestId("pin-ok"));
      await vi.waitFor(() => expect(screen.getByTestId("pin-error").textContent).toBe("The recovery code is not right."));
      expect(staff.last("ClearLockout")?.args).toEqual(["1111111111111111", "corner"]);

      await typePin("12345678901234567");
      expect(screen.getByTestId("pin-dots").dataset.count).toBe("16");
      await fireEvent.click(screen.getByTestId("pin-ok"));
      await vi.waitFor(() => expect(screen.getByTestId("pin-notice").textContent).toBe("Every lockout is lifted. Enter the PIN."));
      expect(screen.queryByTestId("pin-locked")).toBeNull();
      expect(screen.queryByTestId("pin-recovery")).toBeNull();
      expect(screen.getByText("Enter the staff PIN")).toBeTruthy();
      staff.answers.Unlock = () => ok({ id: "sid-3", who: "staff:sid-3", expiresAt: "2099-01-01T00:00:00Z" });
      await typePin("1234");
      await fireEvent.click(screen.getByTestId("pin-ok"));
      await vi.waitFor(() => expect(screen.getByTestId("staff-shell")).toBeTruthy());
    });
  });

  it("goes back to the pad when the backend says the session ended", async () => {
    const { staff, s } = await unlocked();
    expect(screen.getByTestId("staff-shell")).toBeTruthy();
    staff.answers.Attempts = () => fail("ESESSION", "The staff session has ended: enter the PIN again.");
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    expect(await screen.findByTestId("pin-pad")).toBeTruthy();
    expect(screen.queryByTestId("staff-shell")).toBeNull();
    expect(screen.getByTestId("pin-notice").textContent).toBe("The staff session has ended. Enter the PIN again.");
    expect(s.session).toBeNull();
    await fireEvent.click(screen.getByTestId("pin-cancel"));
    expect(screen.queryByTestId("pin-pad")).toBeNull();
    expect(screen.getByTestId("staff-corner")).toBeTruthy();
  });
});

describe("no staff screen without a session", () => {
  it("renders nothing of the staff screens with no session, whatever the view says", async () => {
    const { s, context } = staffWith();
    s.view = "shell";
    render(StaffRoot, { context });
    expect(screen.queryByTestId("staff-shell")).toBeNull();
    expect(screen.queryByTestId("staff-tab-payments")).toBeNull();
    expect(s.active).toBe(false);
  });

  it("refuses calls without a session instead of sending them", async () => {
    const { s, staff } = staffWith();
    const r = await s.load("Attempts", { today: false, needsAttention: false, orderNumber: "", amount: 0, limit: 20, offset: 0 });
    expect(r.ok).toBe(false);
    expect(staff.names()).toEqual([]);
  });

  it("keeps the session id in memory only", async () => {
    const setItem = vi.spyOn(Storage.prototype, "setItem");
    await unlocked();
    expect(setItem).not.toHaveBeenCalled();
    expect(JSON.stringify({ ...localStorage })).not.toContain("sid-1");
    expect(location.href).not.toContain("sid-1");
    setItem.mockRestore();
  });
});

describe("hot corner", () => {
  beforeEach(() => vi.useFakeTimers({ toFake: ["Date"], now: new Date("2025-01-10T12:00:00Z") }));
  afterEach(() => vi.useRealTimers());

  function app() {
    const fake = fakeTransport({ ...baseView, phase: "welcome" });
    const staff = fakeStaff();
    render(App, { props: { api: fake.bridge, staffApi: staff.api } });
    return { fake, staff };
  }

  async function tap(times: number, everyMs: number) {
    for (let i = 0; i < times; i++) {
      if (i > 0) vi.setSystemTime(Date.now() + everyMs);
      await fireEvent.pointerDown(screen.getByTestId("staff-corner"));
    }
  }

  it("is invisible to assistive tech and sits on the customer screens", async () => {
    const { fake } = app();
    await screen.findByTestId("screen-welcome");
    const corner = screen.getByTestId("staff-corner");
    expect(corner.getAttribute("aria-hidden")).toBe("true");
    expect(corner.textContent).toBe("");
    for (const phase of ["ordering", "unknown", "unavailable"] as const) {
      fake.emit(EventCheckout, { ...baseView, phase });
      flushSync();
      expect(screen.getByTestId("staff-corner")).toBeTruthy();
    }
  });

  it("does nothing after 4 taps", async () => {
    const { staff } = app();
    await screen.findByTestId("screen-welcome");
    await tap(4, 300);
    expect(screen.queryByTestId("pin-pad")).toBeNull();
    expect(staff.names()).toEqual([]);
  });

  it("opens the PIN pad at the 5th tap within 3 seconds", async () => {
    const { staff } = app();
    await screen.findByTestId("screen-welcome");
    await tap(5, 600);
    expect(await screen.findByTestId("pin-pad")).toBeTruthy();
    expect(screen.queryByTestId("staff-corner")).toBeNull();
    expect(staff.names()).toEqual(["Gate"]);
    // The customer screen waits underneath, out of reach.
    const customer = document.querySelector<HTMLElement & { inert?: boolean }>(".app")!;
    expect(customer.inert === true || customer.hasAttribute("inert")).toBe(true);
    expect(customer.getAttribute("aria-hidden")).toBe("true");
  });

  it("does nothing when the taps are spread over more than 3 seconds", async () => {
    app();
    await screen.findByTestId("screen-welcome");
    await tap(5, 800);
    expect(screen.queryByTestId("pin-pad")).toBeNull();
    for (let i = 0; i < 6; i++) {
      vi.setSystemTime(Date.now() + 2000);
      await tap(1, 0);
    }
    expect(screen.queryByTestId("pin-pad")).toBeNull();
  });

  it("opens with Ctrl+Alt+S too", async () => {
    app();
    await screen.findByTestId("screen-welcome");
    await fireEvent.keyDown(window, { key: "s", code: "KeyS", ctrlKey: true });
    expect(screen.queryByTestId("pin-pad")).toBeNull();
    await fireEvent.keyDown(window, { key: "s", code: "KeyS", ctrlKey: true, altKey: true });
    expect(await screen.findByTestId("pin-pad")).toBeTruthy();
  });
});

describe("staff session", () => {
  beforeEach(() => vi.useFakeTimers({ now: new Date("2025-01-10T12:00:00Z") }));
  afterEach(() => vi.useRealTimers());

  it("locks after 5 minutes without a touch and returns to the customer screen", async () => {
    const { s, staff } = await unlocked();
    await vi.advanceTimersByTimeAsync(4 * 60_000);
    expect(screen.getByTestId("staff-shell")).toBeTruthy();
    await vi.advanceTimersByTimeAsync(61_000);
    expect(screen.queryByTestId("staff-shell")).toBeNull();
    expect(screen.queryByTestId("pin-pad")).toBeNull();
    expect(screen.getByTestId("staff-corner")).toBeTruthy();
    expect(staff.names()).toContain("Lock");
    expect(s.session).toBeNull();
  });

  it("does not lock while an action is out, and shows its answer when it comes", async () => {
    let finish: (v: unknown) => void = () => {};
    const slow = new Promise((resolve) => (finish = resolve));
    const { s } = await unlocked({ answers: { Reprint: () => slow } });
    const reprint = s.act("Reprint", "0192-a");
    await vi.advanceTimersByTimeAsync(7 * 60_000);
    expect(s.session).not.toBeNull();
    expect(screen.getByTestId("staff-shell")).toBeTruthy();
    finish(null);
    expect((await reprint).ok).toBe(true);
    // Idle again: the lock comes back.
    await vi.advanceTimersByTimeAsync(5 * 60_000 + 2_000);
    expect(s.session).toBeNull();
  });

  it("stays open while staff touch the screens, sending Touch at most every 30 s", async () => {
    const { staff } = await unlocked();
    for (let i = 0; i < 20; i++) {
      await vi.advanceTimersByTimeAsync(20_000);
      await fireEvent.pointerDown(screen.getByTestId("staff-shell"));
    }
    expect(screen.getByTestId("staff-shell")).toBeTruthy();
    const touches = staff.names().filter((n) => n === "Touch").length;
    expect(touches).toBeGreaterThan(5);
    expect(touches).toBeLessThanOrEqual(14);
  });

  it("locks at the backend's expiresAt", async () => {
    await unlocked({ answers: { Unlock: () => ({ id: "s", who: "staff:s", expiresAt: "2025-01-10T12:02:00Z" }) } });
    await vi.advanceTimersByTimeAsync(119_000);
    expect(screen.getByTestId("staff-shell")).toBeTruthy();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(screen.queryByTestId("staff-shell")).toBeNull();
  });

  it("locks on staff-lock", async () => {
    const { staff } = await unlocked();
    await fireEvent.click(screen.getByTestId("staff-lock"));
    expect(screen.queryByTestId("staff-shell")).toBeNull();
    expect(staff.last("Lock")?.args).toEqual(["sid-1"]);
  });
});

describe("staff shell", () => {
  it("has its tabs and shows quit only on the desktop", async () => {
    const { unmount } = await unlocked();
    for (const tab of ["terminal", "payments", "history", "settings", "report", "audit"]) {
      expect(screen.getByTestId(`staff-tab-${tab}`).getAttribute("role")).toBe("tab");
    }
    expect(await screen.findByTestId("staff-version")).toBeTruthy();
    expect(screen.queryByTestId("staff-quit")).toBeNull();
    unmount();
    await unlocked({ answers: { About: () => ({ ...baseAbout, browser: false }) } });
    expect(await screen.findByTestId("staff-quit")).toBeTruthy();
  });

  it("offers to set a real PIN after a demo-PIN unlock, in the staff's language", async () => {
    await unlocked({
      answers: {
        Unlock: () => ({ ...baseSession, demoPin: true, notice: "Demo mode: the staff PIN is the demo default, 1234." }),
        Settings: () => [],
      },
    });
    expect(screen.getByTestId("staff-demo-pin").textContent).toContain("demo PIN 1234");
    expect(screen.queryByTestId("staff-message")).toBeNull();
    await fireEvent.click(screen.getByTestId("staff-lang-fr"));
    expect(screen.getByTestId("staff-tab-settings").textContent).toBe("Réglages");
    await fireEvent.click(screen.getByTestId("staff-demo-pin-change"));
    expect(screen.getByTestId("staff-tab-settings").getAttribute("aria-selected")).toBe("true");
    expect(screen.getByTestId("change-pin")).toBeTruthy();
  });

  it("offers close-checkout only when the customer screen is stuck on unknown or failed", async () => {
    const { kiosk, staff, unmount } = await unlocked({ view: { phase: "unknown" } });
    staff.answers.CloseCheckout = () => ({ ...baseView, phase: "welcome" });
    await fireEvent.click(screen.getByTestId("close-checkout"));
    expect(staff.last("CloseCheckout")?.args).toEqual(["sid-1"]);
    await vi.waitFor(() => expect(kiosk.k.checkout.phase).toBe("welcome"));
    expect((await screen.findByTestId("staff-message")).textContent).toContain("back to the welcome screen");
    expect(screen.queryByTestId("close-checkout")).toBeNull();
    unmount();
    await unlocked({ view: { phase: "paying" } });
    expect(screen.queryByTestId("close-checkout")).toBeNull();
  });

  it("shows the terminal's own code and message in small print", async () => {
    await unlocked({
      answers: {
        Terminal: () => fail("ETERMINAL", "The terminal refused to show its history.", { terminalCode: "HISTORY_KO", terminalMessage: "busy" }),
      },
    });
    const err = await screen.findByTestId("staff-error");
    expect(err.textContent).toContain("The terminal refused to show its history.");
    expect(screen.getByTestId("staff-error-terminal").textContent).toContain("HISTORY_KO busy");
  });

  it("shows the terminal panel and saves an address", async () => {
    const { staff } = await unlocked();
    expect((await screen.findByTestId("terminal-reachable")).dataset.reachable).toBe("true");
    staff.answers.SetTerminalAddress = ([, address]) => ({
      status: { reachable: true, mode: "kiosk", clientTimeoutSeconds: 62, refundTimeoutSeconds: 62, requestOpenSeconds: 900 },
      source: "discovery",
      state: "connected",
      inUse: { instance: "T1", address: "" },
      candidates: [],
      saved: { instance: "", address },
      restartRequired: true,
      note: "Saved for the next start.",
    });
    await fireEvent.input(screen.getByTestId("terminal-address-input"), { target: { value: "10.0.0.9:16125" } });
    await fireEvent.click(screen.getByTestId("terminal-address-save"));
    expect(staff.last("SetTerminalAddress")?.args).toEqual(["sid-1", "10.0.0.9:16125"]);
    expect(await screen.findByTestId("terminal-restart")).toBeTruthy();
  });

  it("shows the saved channel from its flags: the cloud, the LAN first", async () => {
    const saved = { url: "https://cloud.example.test", serial: "SN-77", keySet: true, on: true, lanFirst: true };
    const panel = {
      status: { reachable: true, mode: "kiosk", clientTimeoutSeconds: 62, refundTimeoutSeconds: 62, requestOpenSeconds: 900 },
      source: "address",
      state: "",
      inUse: { instance: "T1", address: "" },
      candidates: [],
      saved: { instance: "T1", address: "" },
      restartRequired: false,
      note: "",
      https: false,
      channel: "both",
      cloud: saved,
    };
    await unlocked({ answers: { Terminal: () => panel } });
    await screen.findByTestId("terminal-reachable");
    await vi.waitFor(() => expect((screen.getByTestId("cloud-on") as HTMLInputElement).checked).toBe(true));
    expect((screen.getByTestId("cloud-lan-first") as HTMLInputElement).checked).toBe(true);
    expect((screen.getByTestId("cloud-serial") as HTMLInputElement).value).toBe("SN-77");
  });

  it("chooses the provider's cloud for the next start, never showing the key", async () => {
    const { staff } = await unlocked();
    await screen.findByTestId("terminal-reachable");
    staff.answers.SetCloud = ([, choice]) => {
      const c = choice as { on: boolean; url: string; serial: string; key: string };
      return {
        status: { reachable: true, mode: "kiosk", clientTimeoutSeconds: 62, refundTimeoutSeconds: 62, requestOpenSeconds: 900 },
        source: "discovery",
        state: "connected",
        inUse: { instance: "T1", address: "" },
        candidates: [],
        saved: { instance: "T1", address: "" },
        restartRequired: true,
        note: "",
        https: false,
        channel: c.on ? "cloud" : "local",
        cloud: { url: c.url, serial: c.serial, keySet: true, on: c.on, lanFirst: false },
      };
    };
    await fireEvent.click(screen.getByTestId("cloud-on"));
    await fireEvent.input(screen.getByTestId("cloud-url"), { target: { value: "https://cloud.example.test" } });
    await fireEvent.input(screen.getByTestId("cloud-serial"), { target: { value: "SN-77" } });
    await fireEvent.input(screen.getByTestId("cloud-key"), { target: { value: "sk_x" } });
    expect((screen.getByTestId("cloud-key") as HTMLInputElement).type).toBe("password");
    await fireEvent.click(screen.getByTestId("cloud-save"));
    expect(staff.last("SetCloud")?.args).toEqual(["sid-1", { on: true, url: "https://cloud.example.test", serial: "SN-77", key: "sk_x", lanFirst: false }]);
    expect(await screen.findByTestId("terminal-restart")).toBeTruthy();
    // Saved: the field is emptied, its placeholder says a key is kept.
    expect((screen.getByTestId("cloud-key") as HTMLInputElement).value).toBe("");
    expect((screen.getByTestId("cloud-key") as HTMLInputElement).placeholder).toContain("saved");
    // The LAN first, the cloud behind it.
    await fireEvent.click(screen.getByTestId("cloud-lan-first"));
    await fireEvent.click(screen.getByTestId("cloud-save"));
    expect(staff.last("SetCloud")?.args).toEqual(["sid-1", { on: true, url: "https://cloud.example.test", serial: "SN-77", key: "", lanFirst: true }]);
  });

  it("reads the terminal's certificate and pins it only once staff confirm", async () => {
    const { staff } = await unlocked();
    await screen.findByTestId("terminal-reachable");
    const fingerprint = "AB:".repeat(31) + "AB";
    staff.answers.TerminalCertificate = ([, address]) => ({
      address: address || "https://10.0.0.9:16125/localapi/v4",
      fingerprint,
      subject: "CN=terminal",
      issuer: "CN=terminal",
      notAfter: "2027-11-24T10:00:00Z",
      trusted: false,
    });
    staff.answers.PinTerminalCertificate = ([, pin]) => ({
      status: { reachable: true, mode: "kiosk", clientTimeoutSeconds: 62, refundTimeoutSeconds: 62, requestOpenSeconds: 900 },
      source: "address",
      state: "",
      inUse: { instance: "", address: "https://10.0.0.9:16125/localapi/v4" },
      candidates: [],
      saved: { instance: "", address: "https://10.0.0.9:16125/localapi/v4" },
      restartRequired: true,
      note: "",
      https: true,
      pin,
    });
    await fireEvent.input(screen.getByTestId("terminal-address-input"), { target: { value: "https://10.0.0.9" } });
    await fireEvent.click(screen.getByTestId("terminal-cert-read"));
    expect(staff.last("TerminalCertificate")?.args).toEqual(["sid-1", "https://10.0.0.9"]);
    expect((await screen.findByTestId("terminal-cert-fingerprint")).textContent).toBe(fingerprint);

    await fireEvent.click(screen.getByTestId("terminal-pin-save"));
    await fireEvent.click(screen.getByTestId("confirm-no"));
    expect(staff.names()).not.toContain("PinTerminalCertificate");

    await fireEvent.click(screen.getByTestId("terminal-pin-save"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("PinTerminalCertificate")?.args).toEqual(["sid-1", fingerprint]);
    expect((await screen.findByTestId("terminal-pin")).textContent).toBe(fingerprint);
    expect(screen.getByTestId("terminal-https").dataset.https).toBe("true");
  });
});

describe("a device posing as the terminal", () => {
  const basePanel = {
    status: { reachable: false, mode: "kiosk", clientTimeoutSeconds: 62, refundTimeoutSeconds: 62, requestOpenSeconds: 900 },
    source: "discovery",
    state: "unreachable",
    inUse: { instance: "Yavin T1", address: "http://10.0.0.2:16125/localapi/v4" },
    candidates: [],
    saved: { instance: "Yavin T1", address: "" },
    restartRequired: false,
    note: "",
    known: [{ address: "http://10.0.0.2:16125/localapi/v4", first: "2025-01-10T09:00:00Z", last: "2025-01-10T11:00:00Z", by: "adopted" }],
  };
  const pending = { instance: "Yavin T1", address: "http://10.0.0.66:16125/localapi/v4", reason: "new_address", since: "2025-01-10T11:05:00Z", confirmed: false };

  it("shows the device waiting for staff and confirms it only once staff say so", async () => {
    const { staff } = await unlocked({ answers: { Terminal: () => ({ ...basePanel, pending }) } });
    const box = await screen.findByTestId("terminal-pending");
    expect(box.dataset.reason).toBe("new_address");
    expect(box.textContent).toContain("http://10.0.0.66:16125/localapi/v4");
    expect(screen.getByTestId("terminal-known-address").dataset.address).toBe("http://10.0.0.2:16125/localapi/v4");

    await fireEvent.click(screen.getByTestId("terminal-pending-confirm"));
    await fireEvent.click(screen.getByTestId("confirm-no"));
    expect(staff.names()).not.toContain("ConfirmTerminalDevice");

    staff.answers.ConfirmTerminalDevice = () => ({
      ...basePanel,
      state: "connected",
      known: [...basePanel.known, { address: pending.address, first: "2025-01-10T11:06:00Z", last: "2025-01-10T11:06:00Z", by: "staff" }],
    });
    await fireEvent.click(screen.getByTestId("terminal-pending-confirm"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("ConfirmTerminalDevice")?.args).toEqual(["sid-1", pending.address, ""]);
    await vi.waitFor(() => expect(screen.queryByTestId("terminal-pending")).toBeNull());
    expect(screen.getAllByTestId("terminal-known-address").map((r) => r.dataset.address)).toContain(pending.address);
  });

  it("refuses a device with another certificate, naming the certificate shown", async () => {
    const certificate = "CD:".repeat(31) + "CD";
    const other = { ...pending, reason: "other_certificate", certificate };
    const { staff } = await unlocked({ answers: { Terminal: () => ({ ...basePanel, https: true, pending: other }) } });
    const box = await screen.findByTestId("terminal-pending");
    expect(box.dataset.reason).toBe("other_certificate");
    expect(box.textContent).toContain(certificate);
    staff.answers.RefuseTerminalDevice = () => ({ ...basePanel, https: true });
    await fireEvent.click(screen.getByTestId("terminal-pending-refuse"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("RefuseTerminalDevice")?.args).toEqual(["sid-1", other.address, certificate]);
    await vi.waitFor(() => expect(screen.queryByTestId("terminal-pending")).toBeNull());
  });

  it("says a confirmed device waits for the payment in progress, with nothing to press", async () => {
    await unlocked({ answers: { Terminal: () => ({ ...basePanel, pending: { ...pending, confirmed: true } }) } });
    expect(await screen.findByTestId("terminal-pending-confirmed")).toBeTruthy();
    expect(screen.queryByTestId("terminal-pending-confirm")).toBeNull();
  });
});

describe("money actions", () => {
  async function openAttempt() {
    const w = await unlocked();
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    const row = await screen.findByTestId("attempt-row");
    expect(row.dataset.uuid).toBe("0192-a");
    expect(row.dataset.state).toBe("approved");
    await fireEvent.click(row);
    expect(screen.getByTestId("attempt-detail")).toBeTruthy();
    return w;
  }

  it("asks before reversing, showing the amount the backend computed (amount + tip)", async () => {
    const { staff } = await openAttempt();
    staff.answers.Reverse = () => ({ attemptUuid: "0192-a", initialTransactionId: "TX-41", reversalTransactionId: "RV-1", amount: 1700 });
    await fireEvent.click(screen.getByTestId("action-reverse"));
    expect(screen.getByRole("alertdialog")).toBeTruthy();
    expect(screen.getByTestId("confirm-amount").textContent).toBe("€17.00");
    await fireEvent.click(screen.getByTestId("confirm-no"));
    expect(screen.queryByTestId("confirm-dialog")).toBeNull();
    expect(staff.names()).not.toContain("Reverse");

    await fireEvent.click(screen.getByTestId("action-reverse"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("Reverse")?.args).toEqual(["sid-1", "0192-a"]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Reversed €17.00: reversal RV-1.");
  });

  it("refunds the amount typed, in cents, after confirming it", async () => {
    const { staff } = await openAttempt();
    staff.answers.Refund = ([, order, cents]) => ({
      idempotentUuid: "0192-r",
      order,
      kind: "refund",
      policy: "refund",
      state: "approved",
      amount: cents,
      giftAmount: 0,
      sendCount: 1,
    });
    const input = screen.getByTestId("refund-amount-input") as HTMLInputElement;
    expect(input.value).toBe("");
    await fireEvent.input(input, { target: { value: "4.555" } });
    await fireEvent.click(screen.getByTestId("action-refund"));
    expect(screen.getByTestId("staff-error").textContent).toContain("Write an amount in EUR, like 4.50.");
    expect(screen.queryByTestId("confirm-dialog")).toBeNull();

    await fireEvent.input(input, { target: { value: "4,5" } });
    await fireEvent.click(screen.getByTestId("action-refund"));
    expect(screen.getByTestId("confirm-amount").textContent).toBe("€4.50");
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("Refund")?.args).toEqual(["sid-1", "ord_41", 450]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Refund of €4.50: approved.");
  });

  it("settles an unknown payment from the terminal's evidence, after confirming", async () => {
    const unknown = { ...approvedAttempt, idempotentUuid: "0192-u", state: "unknown" as const, giftAmount: 0, amount: 890, transactionId: undefined, needsAttention: true };
    const { staff } = await unlocked({
      answers: {
        Attempts: () => ({ attempts: [unknown], total: 1, limit: 20, offset: 0 }),
        ResolveUnknown: () => ({
          attempt: unknown,
          from: "2025-01-10T10:50:00Z",
          to: "2025-01-10T11:10:00Z",
          entries: [{ transactionId: "TX-43", status: "ok", type: "debit", amount: 890, cartId: "ord_41", inJournal: false }],
          charged: [{ transactionId: "TX-43", status: "ok", type: "debit", amount: 890, cartId: "ord_41", inJournal: false }],
          hint: "The terminal lists an approved transaction for this very order: the customer was most likely charged.",
        }),
        ConfirmUnknown: () => ({ ...unknown, state: "approved", needsAttention: false }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.queryByTestId("action-reverse")).toBeNull();
    // An unknown outcome is not said to be charged.
    expect(screen.getByTestId("attempt-amount").textContent).toContain("Asked of the terminal: €8.90");
    expect(screen.getByTestId("attempt-amount").textContent).not.toContain("Charged");
    await fireEvent.click(screen.getByTestId("action-resolve"));
    const evidence = await screen.findByTestId("resolve-evidence");
    expect(evidence.textContent).toContain("most likely charged");
    expect(within(evidence).getByTestId("resolve-entry").dataset.charged).toBe("true");
    await fireEvent.input(screen.getByTestId("resolve-note"), { target: { value: "card ticket seen" } });
    // Staff recognise the transaction: it is recorded with the payment.
    await fireEvent.click(within(evidence).getByTestId("resolve-pick"));
    await fireEvent.click(screen.getByTestId("resolve-paid"));
    expect(screen.getByTestId("confirm-amount").textContent).toBe("€8.90");
    expect(screen.getByTestId("confirm-dialog").textContent).toContain("TX-43");
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("ConfirmUnknown")?.args).toEqual(["sid-1", "0192-u", { paid: true, note: "card ticket seen", transactionId: "TX-43" }]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Recorded: approved.");
  });

  it("shows how an approval disagreed and accepts it only with a note", async () => {
    const flagged = { ...approvedAttempt, idempotentUuid: "0192-f", orderStatus: "needs_attention" as const, needsAttention: true,
      flag: "1 charged where 890 was asked", canAccept: true, chargedAmount: 1 };
    const { staff } = await unlocked({
      answers: {
        Attempts: () => ({ attempts: [flagged], total: 1, limit: 20, offset: 0 }),
        AcceptOrder: () => ({ ...flagged, flag: undefined, canAccept: false, orderStatus: "open" as const }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.getByTestId("attempt-flag").textContent).toContain("1 charged where 890 was asked");
    const button = screen.getByTestId("action-accept") as HTMLButtonElement;
    expect(button.disabled).toBe(true);
    await fireEvent.input(screen.getByTestId("accept-note"), { target: { value: "the customer paid the rest in cash" } });
    expect(button.disabled).toBe(false);
    await fireEvent.click(button);
    expect(staff.last("AcceptOrder")?.args).toEqual(["sid-1", "0192-f", "the customer paid the rest in cash"]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Accepted: the order counts what was charged.");
    expect(screen.queryByTestId("accept-form")).toBeNull();
  });

  it("marks a payment taken through the provider's cloud", async () => {
    const cloud = { ...approvedAttempt, idempotentUuid: "0192-c", channel: "cloud" as const, traits: traitsOf.cloud };
    await unlocked({ answers: { Attempts: () => ({ attempts: [approvedAttempt, cloud], total: 2, limit: 20, offset: 0 }) } });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    const rows = await screen.findAllByTestId("attempt-row");
    expect(rows.map((r) => within(r).queryByTestId("attempt-cloud") !== null)).toEqual([false, true]);
  });

  it("offers only the money actions the backend says are still possible", async () => {
    const given = { ...approvedAttempt, canReverse: false, refundableLeft: 0, reversal: { uuid: "0192-r", state: "unknown" as const } };
    await unlocked({ answers: { Attempts: () => ({ attempts: [given], total: 1, limit: 20, offset: 0 }) } });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.queryByTestId("action-reverse")).toBeNull();
    expect(screen.queryByTestId("refund-amount-input")).toBeNull();
    expect(screen.getByTestId("attempt-refundable").textContent).toContain("no refund or reversal is possible");
    expect(screen.getByTestId("attempt-reversal").dataset.state).toBe("unknown");
    // Part refunded already: a refund of the rest, and no reversal.
    cleanup();
    const part = { ...approvedAttempt, canReverse: false, refundableLeft: 1200 };
    await unlocked({ answers: { Attempts: () => ({ attempts: [part], total: 1, limit: 20, offset: 0 }) } });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.queryByTestId("action-reverse")).toBeNull();
    expect(screen.getByTestId("refund-amount-input")).toBeTruthy();
    expect(screen.getByTestId("attempt-refundable").textContent).toContain("€12.00");
  });

  it("says refunds made elsewhere are not seen only when the provider's record is not read", async () => {
    await unlocked({ answers: { Attempts: () => ({ attempts: [approvedAttempt], total: 1, limit: 20, offset: 0 }) } });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.getByTestId("attempt-elsewhere-unseen").textContent).toContain("Refunds made elsewhere");
    cleanup();
    const seen = { ...approvedAttempt, givenBackElsewhereSeen: true };
    await unlocked({ answers: { Attempts: () => ({ attempts: [seen], total: 1, limit: 20, offset: 0 }) } });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.queryByTestId("attempt-elsewhere-unseen")).toBeNull();
  });

  it("shows a settled attempt as the backend answered it, though the attention filter no longer lists it", async () => {
    const unknown = { ...approvedAttempt, idempotentUuid: "0192-u", state: "unknown" as const, giftAmount: 0, amount: 890, transactionId: undefined, needsAttention: true };
    let settled = false;
    const { staff } = await unlocked({
      answers: {
        // needsAttention filters it out once settled.
        Attempts: () => ({ attempts: settled ? [] : [unknown], total: settled ? 0 : 1, limit: 20, offset: 0 }),
        ResolveUnknown: () => ({ attempt: unknown, from: "2025-01-10T10:50:00Z", to: "2025-01-10T11:10:00Z", entries: [], charged: [], hint: "none" }),
        ConfirmUnknown: () => {
          settled = true;
          return { ...unknown, state: "declined", needsAttention: false, orderStatus: "open" };
        },
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(screen.getByTestId("filter-attention"));
    await fireEvent.submit(screen.getByTestId("filter-apply").closest("form")!);
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    await fireEvent.click(screen.getByTestId("action-resolve"));
    await fireEvent.click(await screen.findByTestId("resolve-not-paid"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    await screen.findByTestId("staff-message");
    await vi.waitFor(() => expect(screen.queryByTestId("attempt-row")).toBeNull());
    const detail = screen.getByTestId("attempt-detail");
    expect(detail.dataset.state).toBe("declined");
    expect(screen.queryByTestId("action-resolve")).toBeNull();
    expect(staff.names().filter((n) => n === "ConfirmUnknown")).toHaveLength(1);
  });

  it("offers no second reversal once reversed, though the list no longer shows the attempt", async () => {
    let reversed = false;
    const { staff } = await unlocked({
      answers: {
        Attempts: () => ({ attempts: reversed ? [] : [approvedAttempt], total: reversed ? 0 : 1, limit: 20, offset: 0 }),
        Reverse: () => {
          reversed = true;
          return { attemptUuid: "0192-a", initialTransactionId: "TX-41", reversalTransactionId: "RV-1", amount: 1700 };
        },
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    await fireEvent.click(screen.getByTestId("action-reverse"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    await screen.findByTestId("staff-message");
    await vi.waitFor(() => expect(screen.queryByTestId("attempt-row")).toBeNull());
    expect(screen.getByTestId("attempt-reversed").textContent).toContain("RV-1");
    expect(screen.queryByTestId("action-reverse")).toBeNull();
    expect(staff.names().filter((n) => n === "Reverse")).toHaveLength(1);
  });

  it("reverses a history transaction the journal does not know, with its own amount", async () => {
    const { staff } = await unlocked({
      answers: {
        History: () => ({
          entries: [
            { transactionId: "TX-9", status: "ok", type: "debit", amount: 990, giftAmount: 10, currencyCode: "EUR", inJournal: false },
            { transactionId: "TX-1", status: "ok", type: "debit", amount: 1500, currencyCode: "EUR", inJournal: true, attemptState: "approved" },
          ],
          total: 2,
          limit: 50,
          offset: 0,
        }),
        ReverseTransaction: () => ({ initialTransactionId: "TX-9", reversalTransactionId: "RV-9", amount: 1000 }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-history"));
    const rows = await screen.findAllByTestId("history-row");
    expect(rows.map((r) => [r.dataset.transactionId, r.dataset.inJournal])).toEqual([
      ["TX-9", "false"],
      ["TX-1", "true"],
    ]);
    expect(screen.getAllByTestId("history-reverse")).toHaveLength(1);
    await fireEvent.click(screen.getByTestId("history-reverse"));
    expect(screen.getByTestId("confirm-amount").textContent).toBe("€10.00");
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("ReverseTransaction")?.args).toEqual(["sid-1", "TX-9"]);
  });
});

describe("payment links", () => {
  const link = {
    ...approvedAttempt,
    idempotentUuid: "0192-l",
    orderId: "link-1",
    orderNumber: "",
    orderStatus: "open" as const,
    channel: "link" as const,
    traits: traitsOf.link,
    policy: "counter" as const,
    state: "sent" as const,
    amount: 2450,
    giftAmount: 0,
    transactionId: undefined,
    scheme: undefined,
    canReverse: false,
    refundableLeft: 0,
    link: "https://pay.example/l/1",
    providerStatus: "pending",
    linkPaid: 1000,
    canCancelLink: true,
    canCapture: false,
  };

  it("offers the link form only when the cloud is set up", async () => {
    await unlocked();
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await screen.findByTestId("attempt-row");
    expect(screen.queryByTestId("link-open")).toBeNull();
  });

  it("sends a link with what staff typed, amount in cents, and shows it", async () => {
    const { staff } = await unlocked({ answers: { About: () => ({ ...baseAbout, links: true }), SendLink: () => link } });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("link-open"));
    const send = screen.getByTestId("link-send") as HTMLButtonElement;
    await fireEvent.input(screen.getByTestId("link-amount"), { target: { value: "24,50" } });
    await fireEvent.input(screen.getByTestId("link-first"), { target: { value: "Claire" } });
    await fireEvent.input(screen.getByTestId("link-last"), { target: { value: "Martin" } });
    expect(send.disabled).toBe(true); // nowhere to send it yet
    await fireEvent.input(screen.getByTestId("link-phone"), { target: { value: "+33612345678" } });
    await fireEvent.input(screen.getByTestId("link-label"), { target: { value: "Commande 12:30" } });
    await fireEvent.click(screen.getByTestId("link-authorise"));
    expect(send.disabled).toBe(false);
    await fireEvent.click(send);
    expect(staff.last("SendLink")?.args).toEqual([
      "sid-1",
      { amount: 2450, label: "Commande 12:30", firstName: "Claire", lastName: "Martin", phone: "+33612345678", email: "", authoriseOnly: true },
    ]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe(
      "Link of €24.50 sent: it is listed with the payments until the customer pays it.",
    );
    const detail = await screen.findByTestId("attempt-detail");
    expect(detail.dataset.uuid).toBe("0192-l");
    expect(screen.getByTestId("attempt-link-url").textContent).toBe(link.link);
    expect(screen.getByTestId("attempt-link-paid").textContent).toBe("€10.00 of €24.50 paid so far");
    expect(await vi.waitFor(() => screen.getByTestId("attempt-link-qr"))).toBeTruthy();
    expect(screen.queryByTestId("link-form")).toBeNull();
  });

  it("cancels a running link after confirming, and says how it ended", async () => {
    const { staff } = await unlocked({
      answers: {
        Attempts: () => ({ attempts: [link], total: 1, limit: 20, offset: 0 }),
        CancelLink: () => ({ ...link, state: "approved", providerStatus: "ok", canCancelLink: false }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    const row = await screen.findByTestId("attempt-row");
    expect(within(row).getByTestId("attempt-link")).toBeTruthy();
    await fireEvent.click(row);
    expect(screen.queryByTestId("action-capture")).toBeNull();
    await fireEvent.click(screen.getByTestId("action-cancel-link"));
    await fireEvent.click(screen.getByTestId("confirm-no"));
    expect(staff.names()).not.toContain("CancelLink");
    await fireEvent.click(screen.getByTestId("action-cancel-link"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("CancelLink")?.args).toEqual(["sid-1", "0192-l"]);
    // The customer paid first: the cart says so, and so does the message.
    expect((await screen.findByTestId("staff-message")).textContent).toBe("The customer paid before the cancel: the link is paid (€24.50).");
  });

  it("captures an authorised link for its amount, after confirming", async () => {
    const authorised = { ...link, state: "approved" as const, providerStatus: "authorised", linkPaid: 0, canCancelLink: false, canCapture: true, orderStatus: "paid" as const };
    const { staff } = await unlocked({
      answers: {
        Attempts: () => ({ attempts: [authorised], total: 1, limit: 20, offset: 0 }),
        CaptureLink: () => ({ ...authorised, providerStatus: "ok", canCapture: false }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.getByTestId("attempt-link-detail").textContent).toContain("paid, to capture");
    expect(screen.queryByTestId("action-share")).toBeNull();
    expect(screen.queryByTestId("action-cancel-link")).toBeNull();
    await fireEvent.click(screen.getByTestId("action-capture"));
    expect(screen.getByTestId("confirm-amount").textContent).toBe("€24.50");
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("CaptureLink")?.args).toEqual(["sid-1", "0192-l"]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Captured: the customer is charged €24.50.");
  });
});

describe("history comparison", () => {
  it("lists the differences with their kind", async () => {
    await unlocked({
      answers: {
        History: () => ({ entries: [], total: 0, limit: 50, offset: 0 }),
        Compare: () => ({
          day: "2025-01-10",
          from: "",
          to: "",
          matched: 3,
          terminal: [],
          journal: [],
          differences: [
            { kind: "terminal_only", message: "The terminal lists an approved debit of 9.90 that the journal does not know.", at: "2025-01-10T11:00:00Z", transactionId: "TX-9", terminalAmount: 990 },
            { kind: "state_mismatch", message: "Outcomes differ.", at: "2025-01-10T11:05:00Z" },
          ],
        }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-history"));
    await fireEvent.input(screen.getByTestId("compare-day-input"), { target: { value: "2025-01-10" } });
    await fireEvent.click(screen.getByTestId("compare-run"));
    const list = await screen.findByTestId("diff-list");
    expect(within(list).getAllByTestId("diff-row").map((r) => r.dataset.kind)).toEqual(["terminal_only", "state_mismatch"]);
    expect(list.textContent).toContain("A charge the journal does not know");
  });
});

describe("settings", () => {
  const settings: Setting[] = [
    { key: "kiosk.idle_seconds", value: 60, stored: null },
    { key: "kiosk.languages", value: ["fr", "en", "es"], stored: ["fr", "en", "es"] },
    { key: "receipt.columns", value: 48, stored: 12, ignored: true },
  ];

  it("saves a value and keeps what was typed when the backend refuses it", async () => {
    const { staff } = await unlocked({ answers: { Settings: () => settings } });
    await fireEvent.click(screen.getByTestId("staff-tab-settings"));
    const idle = (await screen.findByTestId("setting-kiosk-idle_seconds")) as HTMLInputElement;
    expect(idle.value).toBe("60");
    expect(screen.getByTestId("setting-ignored-receipt-columns")).toBeTruthy();

    staff.answers.SaveSetting = () => fail("EINVALID", "The value for kiosk.idle_seconds was refused (must be between 10 and 3600 seconds): the previous value is kept.");
    await fireEvent.input(idle, { target: { value: "5" } });
    await fireEvent.click(screen.getByTestId("setting-save-kiosk-idle_seconds"));
    expect(staff.last("SaveSetting")?.args).toEqual(["sid-1", "kiosk.idle_seconds", 5]);
    expect((await screen.findByTestId("staff-error")).textContent).toContain("must be between 10 and 3600 seconds");
    expect((screen.getByTestId("setting-kiosk-idle_seconds") as HTMLInputElement).value).toBe("5");

    staff.answers.SaveSetting = ([, key, value]) => settings.map((x) => (x.key === key ? { ...x, value, stored: value } : x));
    await fireEvent.click(screen.getByTestId("setting-kiosk-languages-es"));
    await fireEvent.click(screen.getByTestId("setting-save-kiosk-languages"));
    expect(staff.last("SaveSetting")?.args).toEqual(["sid-1", "kiosk.languages", ["fr", "en"]]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Saved: Languages offered.");
  });

  it("changes the PIN after checking the two new ones match", async () => {
    const { staff } = await unlocked();
    await fireEvent.click(screen.getByTestId("staff-tab-settings"));
    await fireEvent.input(screen.getByTestId("change-pin-current"), { target: { value: "1234" } });
    await fireEvent.input(screen.getByTestId("change-pin-next"), { target: { value: "5678" } });
    await fireEvent.input(screen.getByTestId("change-pin-confirm"), { target: { value: "5679" } });
    await fireEvent.click(screen.getByTestId("change-pin-save"));
    expect(staff.names()).not.toContain("ChangePIN");
    expect(screen.getByTestId("staff-error").textContent).toBe("The two PINs are different. Start again.");
    await fireEvent.input(screen.getByTestId("change-pin-confirm"), { target: { value: "5678" } });
    await fireEvent.click(screen.getByTestId("change-pin-save"));
    expect(staff.last("ChangePIN")?.args).toEqual(["sid-1", "1234", "5678"]);
  });
});

describe("report and audit", () => {
  it("shows journal and terminal totals side by side, and prints", async () => {
    const { staff } = await unlocked({
      answers: {
        Report: () => ({
          day: "2025-01-10",
          currency: "EUR",
          locale: "en",
          generatedAt: "2025-01-10T18:00:00Z",
          journal: { byScheme: [{ kind: "debit", scheme: "VISA", count: 2, amount: 3000, gift: 0 }], byKind: [{ kind: "debit", count: 2, amount: 3000, gift: 0 }], net: 3000 },
          terminal: { byScheme: [{ kind: "debit", scheme: "VISA", count: 3, amount: 3990, gift: 0 }], byKind: [{ kind: "debit", count: 3, amount: 3990, gift: 0 }], net: 3990 },
          differences: [{ kind: "terminal_only", message: "A charge.", at: "2025-01-10T11:00:00Z" }],
          sales: [
            { dining: "eat_in", rate: 1000, orders: 1, gross: 1100, tax: 100, net: 1000 },
            { dining: "take_away", rate: 550, orders: 1, gross: 1055, tax: 55, net: 1000 },
            { dining: "", rate: -1, orders: 1, gross: 845, tax: 0, net: 845 },
          ],
        }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-report"));
    await fireEvent.input(screen.getByTestId("report-day-input"), { target: { value: "2025-01-10" } });
    await fireEvent.click(screen.getByTestId("report-run"));
    expect(staff.last("Report")?.args).toEqual(["sid-1", "2025-01-10"]);
    const row = await screen.findByTestId("report-kind-row");
    expect(row.dataset.match).toBe("false");
    expect(row.textContent).toContain("€30.00");
    expect(row.textContent).toContain("€39.90");
    expect(screen.getByTestId("report-net").dataset.match).toBe("false");
    expect(screen.getAllByTestId("report-diff-row")).toHaveLength(1);
    const sales = screen.getAllByTestId("report-sales-row");
    const cells = (r: HTMLElement) => [...r.querySelectorAll("td")].map((c) => c.textContent?.trim()).join(" | ");
    expect(sales.map(cells)).toEqual([
      "Eat in | 10 % | 1 | €11.00 | €1.00 | €10.00",
      "Take away | 5.5 % | 1 | €10.55 | €0.55 | €10.00",
      "Not asked | unknown (amount keyed) | 1 | €8.45 | — | —",
    ]);
    await fireEvent.click(screen.getByTestId("report-print"));
    expect(staff.last("PrintReport")?.args).toEqual(["sid-1", "2025-01-10"]);
  });

  it("lists the audit trail", async () => {
    await unlocked({ answers: { Audit: () => [{ at: "2025-01-10T12:00:00Z", who: "staff:sid-1", action: "unlock", detail: "staff session opened" }] } });
    await fireEvent.click(screen.getByTestId("staff-tab-audit"));
    const rows = await screen.findAllByTestId("audit-row");
    expect(rows).toHaveLength(1);
    expect(rows[0].textContent).toContain("staff session opened");
  });
});

describe("refunds without the card", () => {
  const paid = { ...approvedAttempt, canReverse: false, apiRefundable: 1700 };
  const waiting = {
    ...approvedAttempt,
    idempotentUuid: "0192-w",
    kind: "refund" as const,
    policy: "refund" as const,
    channel: "webservices" as const,
    traits: traitsOf.webservices,
    state: "sent" as const,
    amount: 1200,
    giftAmount: 0,
    transactionId: undefined,
    initialTransactionId: "TX-41",
    providerStatus: "waiting",
    approvalUrl: "https://backoffice.example/approve-1",
    canReverse: false,
    refundableLeft: 0,
  };

  it("is not offered when the payment cannot be refunded that way", async () => {
    await unlocked();
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    await screen.findByTestId("attempt-detail");
    expect(screen.queryByTestId("apirefund-form")).toBeNull();
  });

  it("refunds the amount typed, in cents, after confirming, and shows the manager's approval link", async () => {
    const { staff } = await unlocked({
      answers: { Attempts: () => ({ attempts: [paid], total: 1, limit: 20, offset: 0 }), RefundByAPI: () => waiting },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-payments"));
    await fireEvent.click(await screen.findByTestId("attempt-row"));
    expect(screen.getByTestId("apirefund-form").textContent).toContain("€17.00");
    await fireEvent.input(screen.getByTestId("apirefund-amount-input"), { target: { value: "12" } });
    await fireEvent.click(screen.getByTestId("action-apirefund"));
    await fireEvent.click(screen.getByTestId("confirm-no"));
    expect(staff.names()).not.toContain("RefundByAPI");
    await fireEvent.click(screen.getByTestId("action-apirefund"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("RefundByAPI")?.args).toEqual(["sid-1", "0192-a", 1200]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe(
      "Refund of €12.00 without the card: waiting for a manager's approval.",
    );
    const detail = await screen.findByTestId("attempt-detail");
    expect(detail.dataset.uuid).toBe("0192-w");
    expect(screen.getByTestId("attempt-approval-url").textContent).toBe(waiting.approvalUrl);
    expect(await vi.waitFor(() => screen.getByTestId("attempt-approval-qr"))).toBeTruthy();
  });
});

describe("reconciliation", () => {
  const rec = {
    day: "2025-01-10",
    zone: "Europe/Paris",
    from: "2025-01-09T23:00:00Z",
    to: "2025-01-10T23:00:00Z",
    terminalRead: true,
    providerRead: false,
    providerError: "HTTP 502",
    needsStaff: true,
    lines: [
      { terminal: [{ source: "terminal", transactionId: "TX-K", type: "debit", status: "ok", amount: 640, giftAmount: 0, created: "2025-01-10T10:00:00Z" }], provider: [] },
    ],
    differences: [
      {
        kind: "charged_no_order",
        source: "terminal",
        message: "The terminal lists an approved debit of €6.40 that no order of the journal knows.",
        action: "Find its order, or reverse it from staff mode.",
        at: "2025-01-10T10:00:00Z",
        transactionId: "TX-K",
        otherAmount: 640,
        otherType: "debit",
      },
    ],
    fixes: [{ do: "reverse", transactionId: "TX-K", amount: 640 }],
  };

  it("shows the three columns and reverses a charge no order knows from its difference", async () => {
    const { staff } = await unlocked({
      answers: {
        Reconcile: () => rec,
        ReverseTransaction: () => ({ initialTransactionId: "TX-K", reversalTransactionId: "RV-K", amount: 640 }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-report"));
    await fireEvent.click(screen.getByTestId("reconcile-run"));
    expect((await screen.findByTestId("reconcile-summary")).textContent).toBe("1 payment(s) side by side, 1 difference(s).");
    expect(screen.getByTestId("reconcile-columns").textContent).toContain("Provider: not read (HTTP 502)");
    const row = screen.getByTestId("reconcile-diff-row");
    expect(row.dataset.kind).toBe("charged_no_order");
    expect(row.textContent).toContain("Charged, and no order knows it");
    expect(screen.getAllByTestId("reconcile-line")).toHaveLength(1);
    await fireEvent.click(within(row).getByTestId("reconcile-fix"));
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("ReverseTransaction")?.args).toEqual(["sid-1", "TX-K"]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Reversed €6.40: reversal RV-K.");
    // The day is checked again after the fix.
    expect(staff.names().filter((n) => n === "Reconcile")).toHaveLength(2);
  });

  it("refunds without the card a charge too old to reverse", async () => {
    const old = { ...rec, fixes: [{ do: "refund_by_api", transactionId: "TX-K", amount: 640 }] };
    const { staff } = await unlocked({
      answers: {
        Reconcile: () => old,
        RefundTransactionByAPI: () => ({ ...approvedAttempt, idempotentUuid: "0192-r", kind: "refund", channel: "webservices", traits: traitsOf.webservices, state: "approved", amount: 640 }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-report"));
    await fireEvent.click(screen.getByTestId("reconcile-run"));
    const fix = await screen.findByTestId("reconcile-fix");
    expect(fix.textContent).toBe("Refund €6.40 without the card");
    await fireEvent.click(fix);
    await fireEvent.click(screen.getByTestId("confirm-yes"));
    expect(staff.last("RefundTransactionByAPI")?.args).toEqual(["sid-1", "TX-K"]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Refund of €6.40 without the card: approved.");
  });
});

describe("fiscal records", () => {
  it("warns staff when the records do not verify, and only then", async () => {
    await unlocked({ answers: { About: () => ({ ...baseAbout, fiscalWarning: "The fiscal records do not verify: the ticket chain breaks at record 2." }) } });
    expect((await screen.findByTestId("staff-fiscal-warning")).textContent).toContain("ticket chain breaks at record 2");
  });

  it("says nothing when they verify", async () => {
    await unlocked();
    await screen.findByTestId("staff-lock");
    expect(screen.queryByTestId("staff-fiscal-warning")).toBeNull();
  });
});

describe("the Z", () => {
  it("prints the chosen day's closing and says its number", async () => {
    const { staff } = await unlocked({
      answers: { PrintZ: (args: unknown[]) => ({ number: 12, period: "day", name: args[1], byVat: [], byMeans: [], total: 0, totalExclTax: 0, perpetual: 0 }) },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-report"));
    await fireEvent.input(screen.getByTestId("report-day-input"), { target: { value: "2025-01-09" } });
    await fireEvent.click(screen.getByTestId("report-z"));
    expect(staff.last("PrintZ")?.args).toEqual(["sid-1", "2025-01-09"]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Closing no. 12 of 2025-01-09 recorded and printed.");
  });

  it("lists every closing, days, months and years, and prints the one chosen", async () => {
    const list = [
      { number: 3, period: "year", name: "2025-01", at: "2026-01-01T00:10:00Z", tickets: 40, total: 90000, perpetual: 90000, currency: "EUR", fingerprint: "Z3-aaaaaaaaaaaa" },
      { number: 2, period: "month", name: "2025-12", at: "2026-01-01T00:05:00Z", tickets: 40, total: 90000, perpetual: 90000, currency: "EUR", fingerprint: "Z2-bbbbbbbbbbbb" },
      { number: 1, period: "day", name: "2025-12-31", at: "2026-01-01T00:01:00Z", tickets: 40, total: 90000, perpetual: 90000, currency: "EUR", fingerprint: "Z1-cccccccccccc" },
    ];
    const { staff } = await unlocked({
      answers: {
        Closings: () => list,
        PrintClosing: (args: unknown[]) => ({ number: args[1], period: "month", name: "2025-12", byVat: [], byMeans: [], total: 0, totalExclTax: 0, perpetual: 0 }),
      },
    });
    await fireEvent.click(screen.getByTestId("staff-tab-report"));
    const rows = await screen.findAllByTestId("closing-row");
    expect(rows.map((r) => r.dataset.period)).toEqual(["year", "month", "day"]);
    expect(rows[1].textContent).toContain("Z2-bbbbbbbbbbbb");
    await fireEvent.click(screen.getByRole("button", { name: "Print closing no. 2 (2025-12)" }));
    expect(staff.last("PrintClosing")?.args).toEqual(["sid-1", 2]);
    expect((await screen.findByTestId("staff-message")).textContent).toBe("Closing no. 2 (2025-12) printed.");
  });
});

