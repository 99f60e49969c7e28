import { describe, expect, it, vi } from "vitest";
import {
  browserStaffTransport,
  createStaffApi,
  desktopStaffTransport,
  detectStaff,
  envelope,
  staffCall,
  useStaffTransport,
} from "./staffBridge";

const session = { id: "s1", who: "staff:s1", expiresAt: "2099-01-01T00:00:00Z" };

describe("staff envelope", () => {
  it("passes values and errors through, normalized", () => {
    expect(envelope("Lock", { ok: true, value: null })).toEqual({ ok: true, value: null });
    expect(envelope("Lock", { ok: true })).toEqual({ ok: true, value: null });
    expect(
      envelope("Unlock", { ok: false, error: { code: "ELOCKED_OUT", message: "Locked for 30 seconds.", retryAfterMs: 30000, terminalCode: "" } }),
    ).toEqual({ ok: false, error: { code: "ELOCKED_OUT", message: "Locked for 30 seconds.", retryAfterMs: 30000 } });
    expect(envelope("Reverse", { ok: false, error: { code: "ETERMINAL", message: "Refused.", terminalCode: "X1", terminalMessage: "no" } })).toEqual({
      ok: false,
      error: { code: "ETERMINAL", message: "Refused.", terminalCode: "X1", terminalMessage: "no" },
    });
  });

  it("turns anything else into EBRIDGE", () => {
    for (const raw of [null, undefined, "text", 42, { value: 1 }, { ok: "yes" }, { ok: false }, { ok: false, error: "boom" }]) {
      const r = envelope("Gate", raw);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe("EBRIDGE");
    }
  });
});

describe("desktop staff transport", () => {
  it("calls window.go.main.App.Staff(name, args) and resolves to its envelope", async () => {
    const Staff = vi.fn(async (_name: unknown, _args: unknown) => ({ ok: true, value: session }));
    const api = createStaffApi(detectStaff({ go: { main: { App: { Staff } } } }));
    expect(api.kind).toBe("desktop");
    expect(await api.call("Unlock", "1234")).toEqual({ ok: true, value: session });
    expect(Staff).toHaveBeenCalledWith("Unlock", ["1234"]);
  });

  it("passes the backend's error envelope as is", async () => {
    const Staff = async () => ({ ok: false, error: { code: "EWRONG_PIN", message: "Wrong PIN." } });
    const api = createStaffApi(desktopStaffTransport({ go: { main: { App: { Staff } } } }));
    expect(await api.call("Unlock", "0000")).toEqual({ ok: false, error: { code: "EWRONG_PIN", message: "Wrong PIN." } });
  });

  it("makes a rejected call, a missing binding or a strange answer an EBRIDGE envelope", async () => {
    const rejecting = createStaffApi(desktopStaffTransport({ go: { main: { App: { Staff: async () => Promise.reject("json: cannot unmarshal") } } } }));
    expect(await rejecting.call("Gate")).toEqual({ ok: false, error: { code: "EBRIDGE", message: "json: cannot unmarshal" } });

    const missing = createStaffApi(desktopStaffTransport({ go: { main: { App: { Version: async () => "1" } } } }));
    const m = await missing.call("Gate");
    expect(m.ok ? "" : m.error.code).toBe("EBRIDGE");

    const strange = createStaffApi(desktopStaffTransport({ go: { main: { App: { Staff: async () => session } } } }));
    const s = await strange.call("Unlock", "1234");
    expect(s.ok ? "" : s.error.code).toBe("EBRIDGE");
  });
});

describe("browser staff transport", () => {
  function setup(respond: (url: string, init: RequestInit) => Response | Promise<Response>) {
    const fetch = vi.fn(async (url: string | URL | Request, init?: RequestInit) => respond(String(url), init!));
    const api = createStaffApi(browserStaffTransport({ fetch: fetch as unknown as typeof globalThis.fetch }));
    return { api, fetch };
  }
  const json = (status: number, body: unknown) =>
    new Response(typeof body === "string" ? body : JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });

  it("POSTs the arguments as a JSON array to /api/staff/<Name> and reads the envelope", async () => {
    const { api, fetch } = setup(() => json(200, { ok: true, value: { attempts: [], total: 0, limit: 20, offset: 0 } }));
    expect(api.kind).toBe("browser");
    const filter = { today: true, needsAttention: false, orderNumber: "", amount: 450, limit: 20, offset: 0 };
    const r = await api.call("Attempts", "s1", filter);
    expect(r).toEqual({ ok: true, value: { attempts: [], total: 0, limit: 20, offset: 0 } });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe("/api/staff/Attempts");
    expect(init).toMatchObject({ method: "POST" });
    expect(JSON.parse(String(init!.body))).toEqual(["s1", filter]);
  });

  it("passes an error envelope of HTTP 200 as is", async () => {
    const { api } = setup(() => json(200, { ok: false, error: { code: "ESESSION", message: "The staff session has ended." } }));
    expect(await api.call("Touch", "s1")).toEqual({ ok: false, error: { code: "ESESSION", message: "The staff session has ended." } });
  });

  it.each([
    [400, { error: "staff: Unlock takes 1 argument" }, "staff: Unlock takes 1 argument (HTTP 400)"],
    [403, { error: "forbidden origin" }, "forbidden origin (HTTP 403)"],
    [500, "internal error\n", "internal error (HTTP 500)"],
    [404, "", "Unlock failed (HTTP 404)"],
  ])("turns HTTP %i into EBRIDGE with the server's message", async (status, body, message) => {
    const { api } = setup(() => json(status, body));
    expect(await api.call("Unlock", "1234")).toEqual({ ok: false, error: { code: "EBRIDGE", message } });
  });

  it("turns a network failure or a non-JSON 200 into EBRIDGE", async () => {
    const down = setup(() => Promise.reject(new TypeError("Failed to fetch")));
    const d = await down.api.call("Gate");
    expect(d).toMatchObject({ ok: false, error: { code: "EBRIDGE" } });
    expect(d.ok ? "" : d.error.message).toContain("Failed to fetch");

    const html = setup(() => new Response("<html>proxy</html>", { status: 200 }));
    expect(await html.api.call("Gate")).toMatchObject({ ok: false, error: { code: "EBRIDGE" } });
  });
});

describe("staffCall", () => {
  it("goes through the process-wide transport and never rejects", async () => {
    useStaffTransport({ kind: "test", call: async () => ({ ok: true, value: { hasPin: false, demo: true } }) });
    expect(await staffCall("Gate")).toEqual({ ok: true, value: { hasPin: false, demo: true } });
    useStaffTransport({ kind: "test", call: () => Promise.reject(new Error("boom")) });
    expect(await staffCall("Gate")).toEqual({ ok: false, error: { code: "EBRIDGE", message: "boom" } });
  });
});
