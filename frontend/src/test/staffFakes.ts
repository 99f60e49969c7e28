// Test doubles for the staff seam: the staff screens are tested against the
// contract, not the backend.
import { vi } from "vitest";
import type { CheckoutView } from "../lib/contract";
import { Staff, staffContextKey, type StaffOptions } from "../lib/staff.svelte";
import { createStaffApi, defaultStaffApi, envelope, type StaffTransport } from "../lib/staffBridge";
import { StaffDoor } from "../lib/staffDoor.svelte";
import StaffRoot from "../staff/StaffRoot.svelte";
import type {
  About,
  AttemptView,
  Envelope,
  Gate,
  JournalChannel,
  PaymentTraits,
  Session,
  StaffCallName,
  StaffError,
} from "../lib/staffContract";
import { kioskWith } from "./fakes";

export const ok = <T>(value: T): Envelope<T> => ({ ok: true, value });
export const fail = (code: string, message: string, extra: Partial<StaffError> = {}): Envelope<never> => ({
  ok: false,
  error: { code, message, ...extra },
});

export const baseGate: Gate = { hasPin: true, demo: false };
export const baseSession: Session = { id: "sid-1", who: "staff:sid-1", expiresAt: "2099-01-01T00:00:00Z" };
export const baseAbout: About = {
  version: "1.2.3",
  commit: "abc1234",
  buildTime: "2025-01-10T10:00:00Z",
  dataDir: "/data",
  demo: false,
  mode: "kiosk",
  browser: true,
  links: false,
  apiRefunds: false,
};

const none: PaymentTraits = {
  terminal: false,
  reversible: false,
  throughCloud: false,
  phone: false,
  withoutCard: false,
  marked: false,
  longLived: false,
};

/** Each channel's traits as the backend sends them with an attempt (backend/payment/traits.go). */
export const traitsOf: Record<JournalChannel, PaymentTraits> = {
  local: { ...none, terminal: true, reversible: true },
  cloud: { ...none, terminal: true, reversible: true, throughCloud: true, marked: true },
  link: { ...none, phone: true, marked: true, longLived: true, reportLine: "link" },
  webservices: { ...none, withoutCard: true },
};

export const approvedAttempt: AttemptView = {
  idempotentUuid: "0192-a",
  orderId: "ord_41",
  orderNumber: "41",
  orderStatus: "paid",
  currency: "EUR",
  kind: "debit",
  channel: "local",
  traits: traitsOf.local,
  policy: "kiosk",
  state: "approved",
  amount: 1500,
  giftAmount: 200,
  transactionId: "TX-41",
  scheme: "VISA",
  sendCount: 1,
  createdAt: "2025-01-10T11:00:00Z",
  needsAttention: false,
  canReverse: true,
  refundableLeft: 1700,
  canCancelLink: false,
  canCapture: false,
  apiRefundable: 0,
  canAccept: false,
  givenBackElsewhereSeen: false,
};

type Answer = (args: unknown[]) => unknown;

/**
 * fakeStaff answers staff calls from `answers` (a value, or an envelope
 * made with ok/fail) and records them. Unlock takes PIN 1234.
 */
export function fakeStaff(answers: Partial<Record<StaffCallName, Answer>> = {}) {
  const calls: { name: string; args: unknown[] }[] = [];
  const defaults: Partial<Record<StaffCallName, Answer>> = {
    Gate: () => baseGate,
    Unlock: ([pin]) => (pin === "1234" ? baseSession : fail("EWRONG_PIN", "Wrong PIN. 2 more wrong PIN(s) and the pad locks.")),
    SetPIN: () => baseSession,
    Touch: () => baseSession,
    Lock: () => null,
    About: () => baseAbout,
    Terminal: () => ({
      status: { reachable: true, mode: "kiosk", clientTimeoutSeconds: 62, refundTimeoutSeconds: 62, requestOpenSeconds: 900 },
      source: "discovery",
      state: "connected",
      inUse: { instance: "T1", address: "http://10.0.0.2:16125/localapi/v4" },
      candidates: [],
      saved: { instance: "T1", address: "" },
      restartRequired: false,
      note: "",
    }),
    Attempts: () => ({ attempts: [approvedAttempt], total: 1, limit: 20, offset: 0 }),
    Settings: () => [],
    Audit: () => [],
  };
  const all = { ...defaults, ...answers };
  const call = vi.fn(async (name: string, args: unknown[]): Promise<Envelope<unknown>> => {
    calls.push({ name, args });
    const a = (answers as Record<string, Answer | undefined>)[name] ?? (all as Record<string, Answer | undefined>)[name];
    const r = a ? await a(args) : null;
    if (r && typeof r === "object" && "ok" in r) return envelope(name, r);
    return { ok: true, value: r ?? null };
  });
  const transport: StaffTransport = { kind: "test", call };
  return {
    api: createStaffApi(transport),
    call,
    calls,
    answers,
    /** The calls made, by name. */
    names: () => calls.map((c) => c.name),
    last: (name: string) => calls.filter((c) => c.name === name).at(-1),
  };
}

/**
 * doorFor is the way in (StaffEntry's door) to the staff store s, as after
 * staff mode's first load: its root mounted, s its state.
 */
export function doorFor(s: Staff): StaffDoor {
  const door = new StaffDoor({ load: async () => ({ Staff, StaffRoot, defaultStaffApi }), options: { now: s.now } });
  door.staff = s;
  door.root = StaffRoot;
  return door;
}

/** staffWith builds a kiosk and a staff store, with the render context holding both, and its door. */
export function staffWith(
  opts: { answers?: Partial<Record<StaffCallName, Answer>>; view?: Partial<CheckoutView>; staff?: StaffOptions } = {},
) {
  const kiosk = kioskWith(opts.view ?? {});
  const staff = fakeStaff(opts.answers);
  const s = new Staff(staff.api, opts.staff);
  const context = new Map<unknown, unknown>(kiosk.context);
  context.set(staffContextKey, s);
  return { s, staff, kiosk, context, door: doorFor(s) };
}
