import { describe, expect, it } from "vitest";
import { createStaffApi } from "./staffBridge";
import type { Session } from "./staffContract";
import { mockStaffTransport, staffMockOptionsFromURL } from "./staffMock";

describe("staff dev mock", () => {
  it("reads first run from the URL", () => {
    expect(staffMockOptionsFromURL("?mock&staff=setup")).toEqual({ setup: true, rogue: false });
    expect(staffMockOptionsFromURL("?mock")).toEqual({ setup: false, rogue: false });
    expect(staffMockOptionsFromURL("?mock&terminal=rogue")).toEqual({ setup: false, rogue: true });
  });

  it("unlocks with the demo PIN 1234 and locks the pad after three wrong PINs", async () => {
    let now = Date.parse("2025-01-10T12:00:00Z");
    const api = createStaffApi(mockStaffTransport({ now: () => now }));
    expect(await api.call("Gate")).toEqual({ ok: true, value: { hasPin: false, demo: true } });
    expect(await api.call("Unlock", "0000")).toMatchObject({ ok: false, error: { code: "EWRONG_PIN" } });
    expect(await api.call("Unlock", "0000")).toMatchObject({ ok: false, error: { code: "EWRONG_PIN" } });
    expect(await api.call("Unlock", "0000")).toMatchObject({ ok: false, error: { code: "ELOCKED_OUT", retryAfterMs: 30000 } });
    expect(await api.call("Unlock", "1234")).toMatchObject({ ok: false, error: { code: "ELOCKED_OUT" } });
    now += 31_000;
    const r = await api.call("Unlock", "1234");
    expect(r).toMatchObject({ ok: true, value: { demoPin: true } });
    const sid = (r as { value: Session }).value.id;
    now += 6 * 60_000;
    expect(await api.call("Touch", sid)).toMatchObject({ ok: false, error: { code: "ESESSION" } });
  });

  it("locks the corner's pad and the shortcut's each on its own; the recovery code lifts both", async () => {
    const api = createStaffApi(mockStaffTransport());
    for (let i = 0; i < 3; i++) await api.call("Unlock", "0000", "corner");
    expect(await api.call("Unlock", "1234", "corner")).toMatchObject({ ok: false, error: { code: "ELOCKED_OUT" } });
    expect(await api.call("Unlock", "1234", "shortcut")).toMatchObject({ ok: true });
    expect(await api.call("ClearLockout", "1111 1111 1111 1111", "corner")).toMatchObject({ ok: false, error: { code: "EWRONG_PIN" } });
    expect(await api.call("ClearLockout", "1234 5678 9012 3456", "corner")).toMatchObject({ ok: true });
    expect(await api.call("Unlock", "1234", "corner")).toMatchObject({ ok: true });
  });

  it("has a journal with an unknown attempt and a day with one difference", async () => {
    const api = createStaffApi(mockStaffTransport());
    const r = await api.call("Unlock", "1234");
    const sid = (r as { value: Session }).value.id;
    const page = await api.call("Attempts", sid, { today: false, needsAttention: false, orderNumber: "", amount: 0, limit: 50, offset: 0 });
    expect(page.ok && page.value.attempts.map((a) => a.state)).toContain("unknown");
    const cmp = await api.call("Compare", sid, "");
    expect(cmp.ok && cmp.value.differences.map((d) => d.kind)).toEqual(["terminal_only"]);
    const hist = await api.call("History", sid, { date: "", startTime: "", endTime: "", limit: 50, offset: 0 });
    expect(hist.ok && hist.value.entries.filter((e) => !e.inJournal).map((e) => e.transactionId)).toEqual(["TX-9001"]);
  });

  it("keeps its day's difference just after midnight", async () => {
    const early = new Date();
    early.setHours(0, 15, 0, 0);
    const api = createStaffApi(mockStaffTransport({ now: () => early.getTime() }));
    const r = await api.call("Unlock", "1234");
    const sid = (r as { value: Session }).value.id;
    const cmp = await api.call("Compare", sid, "");
    expect(cmp.ok && cmp.value.differences.map((d) => d.kind)).toEqual(["terminal_only"]);
  });

  it("asks for a first PIN in setup mode", async () => {
    const api = createStaffApi(mockStaffTransport({ setup: true }));
    expect(await api.call("Gate")).toEqual({ ok: true, value: { hasPin: false, demo: false } });
    expect(await api.call("Unlock", "1234")).toMatchObject({ ok: false, error: { code: "ENOPIN" } });
    expect(await api.call("SetPIN", "2468")).toMatchObject({ ok: true });
    expect(await api.call("SetPIN", "1357")).toMatchObject({ ok: false, error: { code: "EPIN_SET" } });
  });

  it("has a device posing as the terminal with ?mock&terminal=rogue, confirmed only as shown", async () => {
    const api = createStaffApi(mockStaffTransport({ rogue: true }));
    const sid = ((await api.call("Unlock", "1234")) as { value: Session }).value.id;
    const r = await api.call("Terminal", sid, false);
    const p = (r as { value: { pending: { address: string; reason: string } } }).value.pending;
    expect(p).toMatchObject({ reason: "new_address" });
    expect(await api.call("ConfirmTerminalDevice", sid, "http://10.9.9.9:16125/localapi/v4", "")).toMatchObject({ ok: false, error: { code: "ENOTFOUND" } });
    const done = await api.call("ConfirmTerminalDevice", sid, p.address, "");
    expect(done).toMatchObject({ ok: true, value: { pending: undefined } });
    expect((done as { value: { known: { address: string }[] } }).value.known.map((k) => k.address)).toContain(p.address);
  });
});
