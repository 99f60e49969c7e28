// The staff seam, beside bridge.ts and detected the same way:
//
// Desktop: window.go.main.App.Staff(name, args) resolves to the envelope.
// Browser (`comptoir serve`): POST /api/staff/<Name> with a JSON array of the
// arguments; HTTP 200 carries the envelope, 400/403/500 carry
// {"error": "..."} for a malformed call.
// Tests: a fake staff transport (src/test/staffFakes.ts).
//
// Whatever happens on the way, a call resolves to an envelope: a failure of
// the transport itself is an error envelope with code EBRIDGE, so the staff
// screens have one shape of error to show.

import { describeError, errorText, wailsBindings, type WailsHost } from "./bridge";
import type { Envelope, StaffCallName, StaffArgs, StaffError, StaffValue } from "./staffContract";

/** A StaffTransport carries one staff call and answers its envelope; it never rejects. */
export interface StaffTransport {
  readonly kind: "desktop" | "browser" | "test";
  call(name: string, args: unknown[]): Promise<Envelope<unknown>>;
}

export function bridgeError(message: string, status?: number): StaffError {
  return { code: "EBRIDGE", message: status ? `${message} (HTTP ${status})` : message };
}

/**
 * envelope checks that an answer is an envelope and normalizes its error.
 * Anything else is an EBRIDGE error: a screen must never act on a guess.
 */
export function envelope(name: string, raw: unknown): Envelope<unknown> {
  if (raw && typeof raw === "object" && "ok" in raw) {
    const r = raw as { ok: unknown; value?: unknown; error?: unknown };
    if (r.ok === true) return { ok: true, value: r.value ?? null };
    if (r.ok === false && r.error && typeof r.error === "object") {
      const e = r.error as Partial<Record<keyof StaffError, unknown>>;
      const code = typeof e.code === "string" && e.code ? e.code : "EINTERNAL";
      const out: StaffError = { code, message: typeof e.message === "string" && e.message ? e.message : code };
      if (typeof e.retryAfterMs === "number" && e.retryAfterMs > 0) out.retryAfterMs = e.retryAfterMs;
      if (typeof e.terminalCode === "string" && e.terminalCode) out.terminalCode = e.terminalCode;
      if (typeof e.terminalMessage === "string" && e.terminalMessage) out.terminalMessage = e.terminalMessage;
      return { ok: false, error: out };
    }
  }
  return { ok: false, error: bridgeError(`The answer to ${name} is not understood.`) };
}

/** desktopStaffTransport calls the Wails binding Staff(name, args). */
export function desktopStaffTransport(host: WailsHost): StaffTransport {
  return {
    kind: "desktop",
    async call(name, args) {
      const fn = wailsBindings(host)?.Staff;
      if (typeof fn !== "function") {
        return { ok: false, error: bridgeError("This version of the application has no staff functions.") };
      }
      try {
        return envelope(name, await fn(name, args));
      } catch (err) {
        return { ok: false, error: bridgeError(describeError(err) || `${name} failed.`) };
      }
    },
  };
}

export interface StaffBrowserDeps {
  fetch: typeof fetch;
  /** Default /api/staff/. */
  base?: string;
}

/** browserStaffTransport POSTs to `comptoir serve`'s /api/staff/<Name>. */
export function browserStaffTransport(deps: StaffBrowserDeps): StaffTransport {
  const base = deps.base ?? "/api/staff/";
  return {
    kind: "browser",
    async call(name, args) {
      let res: Response;
      try {
        res = await deps.fetch(base + encodeURIComponent(name), {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify(args),
        });
      } catch (err) {
        return { ok: false, error: bridgeError(`The kiosk's server cannot be reached: ${describeError(err)}`) };
      }
      let text: string;
      try {
        text = await res.text();
      } catch (err) {
        return { ok: false, error: bridgeError(`The answer to ${name} was cut off: ${describeError(err)}`) };
      }
      if (!res.ok) {
        return { ok: false, error: bridgeError(errorText(text) || `${name} failed`, res.status) };
      }
      try {
        return envelope(name, JSON.parse(text));
      } catch {
        return { ok: false, error: bridgeError(`The answer to ${name} is not JSON.`) };
      }
    },
  };
}

/** detectStaff picks the staff transport for this window, as bridge.ts's detect does. */
export function detectStaff(host: WailsHost & { fetch?: typeof fetch } = globalThis as WailsHost): StaffTransport {
  if (wailsBindings(host)) return desktopStaffTransport(host);
  return browserStaffTransport({ fetch: (host.fetch ?? globalThis.fetch).bind(globalThis) });
}

/** StaffApi is the typed face of a StaffTransport. */
export interface StaffApi {
  readonly kind: StaffTransport["kind"];
  call<N extends StaffCallName>(name: N, ...args: StaffArgs<N>): Promise<Envelope<StaffValue<N>>>;
}

export function createStaffApi(t: StaffTransport): StaffApi {
  return {
    kind: t.kind,
    call: async (name, ...args) => {
      try {
        return (await t.call(name, args)) as never;
      } catch (err) {
        // A transport must not reject; if one does, it is still an envelope here.
        return { ok: false, error: bridgeError(describeError(err)) } as never;
      }
    },
  };
}

let current: StaffApi | undefined;

/** staffApi is the process-wide staff API, detected at first use (or set by useStaffTransport). */
export function staffApi(): StaffApi {
  current ??= createStaffApi(detectStaff());
  return current;
}

/** defaultStaffApi follows the process-wide staff API, whichever it is at the time of each call. */
export const defaultStaffApi: StaffApi = {
  get kind() {
    return staffApi().kind;
  },
  call: (name, ...args) => staffApi().call(name, ...args),
};

/** useStaffTransport replaces the staff transport: tests. */
export function useStaffTransport(t: StaffTransport): StaffApi {
  current = createStaffApi(t);
  return current;
}

/** staffCall makes one staff call; it resolves to the envelope and never rejects. */
export function staffCall<N extends StaffCallName>(name: N, ...args: StaffArgs<N>): Promise<Envelope<StaffValue<N>>> {
  return staffApi().call(name, ...args);
}
