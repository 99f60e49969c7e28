// A scripted fake staff backend for `?mock`: look at the staff screens
// without the Go side. It is a script, not the staff logic:
//
//   PIN 1234 (demo: no PIN set; three wrong PINs lock the pad for 30 s, the
//   corner's and the shortcut's each on its own; recovery code
//   1234 5678 9012 3456 lifts both)
//   &staff=setup   first run: no PIN, not demo, the pad asks for a new one
//   a journal of a few attempts: approved, declined, approved with a tip, one
//   unknown, a refund, one already reversed; a terminal history with one
//   charge the journal does not know (the difference of the day).

import type { CheckoutView } from "./contract";
import type { StaffTransport } from "./staffBridge";
import type {
  About,
  AttemptView,
  CloudChoice,
  Decision,
  AuditEntry,
  Comparison,
  Envelope,
  Evidence,
  FiscalClosing,
  Filter,
  HistoryEntry,
  HistoryFilter,
  KnownAddress,
  LinkRequest,
  PaymentView,
  PendingDevice,
  Reconciliation,
  ReconcileDifference,
  ReconcileEntry,
  ReconcileLine,
  Report,
  ReversalResult,
  Session,
  Setting,
  ShareMedium,
  StaffError,
  TerminalPanel,
  TerminalRef,
  Total,
} from "./staffContract";

// Kept here rather than imported, so the mock chunk shares no module with the app.
function localDay(d: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

export interface StaffMockOptions {
  /** First run: no PIN, not demo. */
  setup?: boolean;
  /** Releases the customer screen (the kiosk mock's Finish). */
  closeCheckout?: () => unknown;
  now?: () => number;
  /** Session length, ms. Default 5 min. */
  ttlMs?: number;
  /** A device announces itself under the terminal's name from a new address, waiting for staff (`?mock&terminal=rogue`). */
  rogue?: boolean;
}

export function staffMockOptionsFromURL(search: string): StaffMockOptions {
  const q = new URLSearchParams(search);
  return { setup: q.get("staff") === "setup", rogue: q.get("terminal") === "rogue" };
}

class Refusal {
  constructor(readonly error: StaffError) {}
}

function refuse(code: string, message: string, extra: Partial<StaffError> = {}): never {
  throw new Refusal({ code, message, ...extra });
}

const DEMO_PIN = "1234";

/** mockStaffTransport is a scripted staff backend behind the staff transport. */
export function mockStaffTransport(opts: StaffMockOptions = {}): StaffTransport {
  const now = opts.now ?? (() => Date.now());
  const ttl = opts.ttlMs ?? 5 * 60_000;
  const demo = !opts.setup;
  let pin: string | null = null;
  // By the gesture that opened the pad, as the backend counts by origin.
  const failures = new Map<string, number>();
  const lockedUntil = new Map<string, number>();
  const sessions = new Map<string, Session>();
  const audit: AuditEntry[] = [];
  const closings: FiscalClosing[] = [];
  let seq = 0;

  const iso = (t: number) => new Date(t).toISOString();
  // The script spans the last 100 minutes; in the first 100 minutes of a
  // day it is squeezed into the day, so that "today" always holds it.
  const midnight = new Date(now());
  midnight.setHours(0, 0, 0, 0);
  const squeeze = Math.max(0, Math.min(1, (now() - midnight.getTime() - 60_000) / (100 * 60_000)));
  const minutesAgo = (m: number) => iso(now() - m * 60_000 * squeeze);
  const day = (t: number) => localDay(new Date(t));

  function note(who: string, action: string, subject = "", detail = "") {
    audit.push({ at: iso(now()), who, action, subject, detail });
  }

  // ---- The journal's script ----
  const attempt = (a: Partial<AttemptView> & Pick<AttemptView, "idempotentUuid" | "orderId" | "state" | "amount">): AttemptView => ({
    kind: "debit",
    channel: "local",
    policy: "kiosk",
    giftAmount: 0,
    sendCount: 1,
    createdAt: minutesAgo(30),
    needsAttention: false,
    currency: "EUR",
    canReverse: false,
    refundableLeft: 0,
    canCancelLink: false,
    canCapture: false,
    apiRefundable: 0,
    canAccept: false,
    givenBackElsewhereSeen: false,
    ...a,
  });
  // What an order can still give back: as the journal counts it, approved
  // debits less refunds and reversals.
  const givable = (orderId: string) => {
    const of = attempts.filter((a) => a.orderId === orderId && a.state === "approved");
    const taken = of.filter((a) => a.kind === "debit").reduce((t, a) => t + a.amount + a.giftAmount, 0);
    const back = of.filter((a) => a.kind === "refund").reduce((t, a) => t + a.amount + a.giftAmount, 0) +
      of.filter((a) => a.kind === "debit" && a.reversalTransactionId).reduce((t, a) => t + a.amount + a.giftAmount, 0);
    return Math.max(taken - back, 0);
  };
  const withActions = (a: AttemptView): AttemptView => {
    if (a.kind !== "debit" || a.state !== "approved") return { ...a, canReverse: false, refundableLeft: 0, apiRefundable: 0 };
    const left = givable(a.orderId);
    const apiRefund = attempts.find((r) => r.channel === "webservices" && r.initialTransactionId === a.transactionId);
    const once = !!a.transactionId && !a.reversalTransactionId && !apiRefund;
    return {
      ...a,
      refundableLeft: left,
      canReverse: !!a.transactionId && !a.reversalTransactionId && !apiRefund && left >= a.amount + a.giftAmount,
      apiRefund: apiRefund && { uuid: apiRefund.idempotentUuid, state: apiRefund.state, transactionId: apiRefund.transactionId },
      apiRefundable: once ? Math.min(left, a.amount + a.giftAmount) : 0,
    };
  };
  const attempts: AttemptView[] = [
    attempt({ idempotentUuid: "0192f0c4-0001-7000-8000-000000000001", orderId: "ord_0041", orderNumber: "41", orderStatus: "paid", state: "approved", amount: 1500, transactionId: "TX-0041", scheme: "VISA", createdAt: minutesAgo(95), finalAt: minutesAgo(94) }),
    attempt({ idempotentUuid: "0192f0c4-0002-7000-8000-000000000002", orderId: "ord_0042", orderNumber: "42", orderStatus: "paid", state: "declined", amount: 2350, error: "", createdAt: minutesAgo(70) }),
    attempt({ idempotentUuid: "0192f0c4-0003-7000-8000-000000000003", orderId: "ord_0042", orderNumber: "42", orderStatus: "paid", state: "approved", amount: 2350, giftAmount: 200, transactionId: "TX-0042", scheme: "MASTERCARD", policy: "counter", createdAt: minutesAgo(68) }),
    attempt({ idempotentUuid: "0192f0c4-0004-7000-8000-000000000004", orderId: "ord_0043", orderNumber: "43", orderStatus: "needs_attention", state: "unknown", amount: 890, sendCount: 14, error: "no answer from the terminal after 15 min", needsAttention: true, createdAt: minutesAgo(40) }),
    attempt({ idempotentUuid: "0192f0c4-0005-7000-8000-000000000005", orderId: "ord_0041", orderNumber: "41", orderStatus: "paid", state: "approved", kind: "refund", policy: "refund", amount: 500, transactionId: "TX-0044", scheme: "VISA", createdAt: minutesAgo(20) }),
    attempt({ idempotentUuid: "0192f0c4-0006-7000-8000-000000000006", orderId: "ord_0038", orderNumber: "38", orderStatus: "paid", state: "approved", amount: 1200, transactionId: "TX-0038", scheme: "CB", createdAt: iso(now() - 26 * 3600_000), reversalTransactionId: "RV-0038" }),
  ];

  // ---- The terminal's history ----
  const entry = (e: Partial<HistoryEntry>): HistoryEntry => ({ status: "ok", type: "debit", currencyCode: "EUR", inJournal: false, ...e });
  /** The reversals made from these staff screens. */
  const reversals = new Set<string>();
  const history: HistoryEntry[] = [
    entry({ transactionId: "TX-9001", amount: 990, scheme: "VISA", cartId: "", createdAt: minutesAgo(50), reference: "keypad" }),
    entry({ transactionId: "TX-0041", amount: 1500, scheme: "VISA", cartId: "ord_0041", createdAt: minutesAgo(94) }),
    entry({ transactionId: "TX-0042-KO", status: "ko", amount: 2350, scheme: "MASTERCARD", cartId: "ord_0042", createdAt: minutesAgo(70) }),
    entry({ transactionId: "TX-0042", amount: 2350, giftAmount: 200, scheme: "MASTERCARD", cartId: "ord_0042", createdAt: minutesAgo(67) }),
    entry({ transactionId: "TX-0043", amount: 890, scheme: "CB", cartId: "ord_0043", createdAt: minutesAgo(39) }),
    entry({ transactionId: "TX-0044", type: "refund", amount: 500, scheme: "VISA", cartId: "ord_0041", createdAt: minutesAgo(20) }),
  ];

  /** A history entry as a column of the reconciliation shows it. */
  const reconcileEntry = (e: HistoryEntry, source: string): ReconcileEntry => ({
    source, transactionId: e.transactionId, type: e.type ?? "", status: e.status ?? "", amount: e.amount ?? 0, giftAmount: e.giftAmount ?? 0,
    currency: e.currencyCode, created: e.createdAt ?? "", cartId: e.cartId,
  });
  function marked(): HistoryEntry[] {
    return history
      .map((e) => {
        // By transactionId, else (an attempt the terminal never answered) by order, kind and amount.
        const a =
          attempts.find((x) => x.transactionId && x.transactionId === e.transactionId) ??
          attempts.find((x) => !x.transactionId && e.cartId && x.orderId === e.cartId && x.kind === e.type && x.amount === e.amount);
        const out: HistoryEntry = { ...e, created: e.createdAt, inJournal: !!a };
        if (a) Object.assign(out, { attemptUuid: a.idempotentUuid, attemptState: a.state, orderId: a.orderId });
        if (e.type === "reversal") out.inJournal = reversals.has(e.transactionId ?? "");
        return out;
      })
      .sort((x, y) => (y.createdAt ?? "").localeCompare(x.createdAt ?? ""));
  }

  // ---- Terminal ----
  const candidates: TerminalRef[] = [
    { instance: "Yavin-Sim-01", address: "http://192.168.1.40:16125/localapi/v4" },
    { instance: "Yavin-Bar-02", address: "http://192.168.1.41:16125/localapi/v4" },
  ];
  let saved: TerminalRef = { ...candidates[0] };
  let restartRequired = false;
  let terminalNote = "";
  let https = false;
  let pinned = "";
  let cloud: CloudChoice = { on: false, url: "", serial: "", key: "", lanFirst: false };
  const known: KnownAddress[] = [{ address: candidates[0].address, first: iso(now()), last: iso(now()), by: "adopted" }];
  // A device under the terminal's name waiting for staff: none until the mock is told otherwise.
  let pending: PendingDevice | undefined = opts.rogue
    ? { instance: candidates[0].instance, address: "http://192.168.1.66:16125/localapi/v4", reason: "new_address", since: iso(now()), confirmed: false }
    : undefined;
  const mockFingerprint = Array.from({ length: 32 }, (_, i) => ((i * 37 + 11) % 256).toString(16).padStart(2, "0").toUpperCase()).join(":");
  function panel(greet: boolean): TerminalPanel {
    return {
      status: {
        reachable: true,
        greeted: greet || undefined,
        mode: String(settings.get("kiosk.mode") ?? "kiosk"),
        clientTimeoutSeconds: settings.get("kiosk.mode") === "counter" ? 125 : 62,
        refundTimeoutSeconds: 62,
        requestOpenSeconds: 900,
        raw: '{"status":"ok"}',
      },
      source: "discovery",
      state: "connected",
      inUse: { ...candidates[0] },
      candidates: candidates.map((c) => ({ ...c })),
      saved: { ...saved },
      restartRequired,
      note: terminalNote,
      https,
      pin: pinned || undefined,
      channel: cloud.on ? (cloud.lanFirst ? "both" : "cloud") : "local",
      cloud: { url: cloud.url, serial: cloud.serial, keySet: cloud.key !== "" },
      pending: pending && { ...pending },
      known: known.map((k) => ({ ...k })),
    };
  }

  function waiting(address: string, certificate: string): PendingDevice {
    if (!pending || pending.address !== address || (pending.certificate ?? "") !== certificate)
      refuse("ENOTFOUND", "This device is no longer the one waiting for confirmation: look at the terminal screen again. Nothing was changed.");
    return pending;
  }

  // ---- Settings ----
  const defaults: Record<string, unknown> = {
    "kiosk.mode": "kiosk",
    "kiosk.languages": ["fr", "en", "es"],
    "kiosk.default_language": "fr",
    "kiosk.currency": "",
    "kiosk.idle_seconds": 60,
    "kiosk.meal_voucher_cap": 2500,
    "receipt.merchant": { name: "Comptoir", address: [], vatNumber: "", footer: ["Merci de votre visite !"], qrUrl: "" },
    "receipt.format": "text",
    "receipt.columns": 48,
    "kiosk.dining": "ask",
  };
  const settings = new Map<string, unknown>([["kiosk.idle_seconds", 5]]);
  function why(key: string, v: unknown): string {
    switch (key) {
      case "kiosk.mode":
        return v === "kiosk" || v === "counter" ? "" : "mode must be kiosk or counter";
      case "kiosk.languages":
        return Array.isArray(v) && v.length && v.every((l) => l === "fr" || l === "en" || l === "es") ? "" : "languages are among fr, en, es";
      case "kiosk.default_language":
        return v === "fr" || v === "en" || v === "es" ? "" : `language ${JSON.stringify(v)} is not one of fr, en, es`;
      case "kiosk.currency":
        return typeof v === "string" && /^[A-Z]{3}$/.test(v) ? "" : "not an ISO 4217 code";
      case "kiosk.idle_seconds":
        return Number.isInteger(v) && (v as number) >= 10 && (v as number) <= 3600 ? "" : "must be between 10 and 3600 seconds";
      case "kiosk.meal_voucher_cap":
        return Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 100_000 ? "" : "must be between 0 and 100000 cents";
      case "receipt.merchant":
        return v && typeof v === "object" && !Array.isArray(v) ? "" : "not a merchant";
      case "receipt.format":
        return v === "text" || v === "escpos" ? "" : "must be text or escpos";
      case "receipt.columns":
        return v === 32 || v === 48 ? "" : "must be 32 or 48";
      case "kiosk.dining":
        return v === "ask" || v === "eat_in" || v === "take_away" ? "" : "must be ask, eat_in or take_away";
    }
    return "unknown setting";
  }
  function settingList(): Setting[] {
    return Object.keys(defaults).map((key) => {
      const stored = settings.has(key) ? settings.get(key) : null;
      const ignored = stored !== null && why(key, stored) !== "";
      return { key, value: stored !== null && !ignored ? stored : defaults[key], stored, ignored: ignored || undefined };
    });
  }

  // ---- Report ----
  function totals(items: { kind: string; scheme?: string; amount: number; gift: number }[]) {
    const map = new Map<string, Total>();
    const kinds = new Map<string, Total>();
    let net = 0;
    for (const i of items) {
      const k = `${i.kind}/${i.scheme ?? "?"}`;
      const t = map.get(k) ?? { kind: i.kind, scheme: i.scheme ?? "?", count: 0, amount: 0, gift: 0 };
      t.count++;
      t.amount += i.amount;
      t.gift += i.gift;
      map.set(k, t);
      const kt = kinds.get(i.kind) ?? { kind: i.kind, count: 0, amount: 0, gift: 0 };
      kt.count++;
      kt.amount += i.amount;
      kt.gift += i.gift;
      kinds.set(i.kind, kt);
      net += (i.kind === "debit" ? 1 : -1) * (i.amount + i.gift);
    }
    return { byScheme: [...map.values()], byKind: [...kinds.values()], net };
  }
  function differences(d: string) {
    return marked()
      .filter((e) => !e.inJournal && e.status === "ok" && day(Date.parse(e.createdAt ?? "")) === d)
      .map((e) => ({
        kind: e.type === "reversal" ? "reversal_unknown" : "terminal_only",
        message: `The terminal lists an approved ${e.type} of ${((e.amount ?? 0) / 100).toFixed(2)} that the journal does not know (made on the terminal itself, or lost by the kiosk).`,
        at: e.createdAt ?? "",
        transactionId: e.transactionId,
        orderId: e.cartId || undefined,
        terminalAmount: (e.amount ?? 0) + (e.giftAmount ?? 0),
        terminalStatus: e.status,
      }));
  }
  /** The mock's orders carry no lines: every paid debit reads as eaten in at 10 %. */
  function sales(paid: { kind: string; amount: number }[]) {
    const debits = paid.filter((p) => p.kind === "debit");
    if (debits.length === 0) return [];
    const gross = debits.reduce((n, p) => n + p.amount, 0);
    const tax = Math.round((gross * 1000) / 11000);
    return [{ dining: "eat_in", rate: 1000, orders: debits.length, gross, tax, net: gross - tax }];
  }
  function report(d: string): Report {
    const inDay = (t?: string) => !!t && day(Date.parse(t)) === d;
    const journal = attempts
      .filter((a) => a.state === "approved" && inDay(a.createdAt))
      .map((a) => ({ kind: a.kind, scheme: a.scheme, amount: a.amount, gift: a.giftAmount }));
    const terminal = marked()
      .filter((e) => e.status === "ok" && inDay(e.createdAt))
      .map((e) => ({ kind: e.type ?? "debit", scheme: e.scheme, amount: e.amount ?? 0, gift: e.giftAmount ?? 0 }));
    return { day: d, currency: "EUR", locale: "fr", generatedAt: iso(now()), journal: totals(journal), terminal: totals(terminal), differences: differences(d), sales: sales(journal) };
  }
  function reportCSV(r: Report): string {
    const dec = (c: number) => (c / 100).toFixed(2);
    const rows = [["section", "source", "kind", "scheme", "count", "amount", "gift", "total", "currency", "day"]];
    for (const [name, t] of [["journal", r.journal], ["terminal", r.terminal]] as const) {
      for (const x of t.byScheme) rows.push(["by_scheme", name, x.kind, x.scheme ?? "", String(x.count), dec(x.amount), dec(x.gift), dec(x.amount + x.gift), r.currency, r.day]);
      rows.push(["net", name, "", "", "", "", "", dec(t.net), r.currency, r.day]);
    }
    return rows.map((r) => r.map((c) => (/[",\n]/.test(c) ? `"${c.replaceAll('"', '""')}"` : c)).join(",")).join("\n") + "\n";
  }

  // ---- Sessions ----
  function open(demoPin: boolean): Session {
    const id = Array.from({ length: 32 }, () => Math.floor(Math.random() * 16).toString(16)).join("");
    const s: Session = { id, who: "staff:" + id.slice(0, 8), expiresAt: iso(now() + ttl), demoPin: demoPin || undefined };
    if (demoPin) s.notice = "Demo mode: the staff PIN is the demo default, 1234. Set a PIN of your own before taking real payments.";
    sessions.set(id, s);
    note(s.who, "unlock", "", "staff session opened");
    return s;
  }
  function session(id: unknown): Session {
    const s = typeof id === "string" ? sessions.get(id) : undefined;
    if (!s || Date.parse(s.expiresAt) <= now()) {
      if (typeof id === "string") sessions.delete(id);
      refuse("ESESSION", "The staff session has ended: enter the PIN again.");
    }
    s.expiresAt = iso(now() + ttl);
    return s;
  }
  function find(uuid: unknown): AttemptView {
    const a = attempts.find((x) => x.idempotentUuid === uuid);
    if (!a) refuse("ENOTFOUND", `Finding the payment: no attempt ${String(uuid)}.`);
    return a;
  }

  const refundByAPI = (sid: string, uuid: string, amount: number): AttemptView => {
    const s = session(sid);
    if (!Number.isInteger(amount) || amount <= 0) refuse("EINVALID", "The amount to refund must be more than zero.");
    const d = withActions(find(uuid));
    if (amount > d.apiRefundable)
      refuse("EINVALID", d.apiRefundable <= 0 ? "This payment cannot be refunded by API again. Nothing was sent." : `The refund could not be started: at most ${d.apiRefundable} cents. Nothing was sent.`);
    const n = ++seq;
    // Above 50,00 the mock provider waits for a manager, as a real one does for an unknown user.
    const waiting = amount > 5000;
    const a = attempt({ idempotentUuid: `0192f0c4-00w${n}-7000-8000-000000000000`, orderId: d.orderId, orderNumber: d.orderNumber, orderStatus: d.orderStatus,
      state: waiting ? "sent" : "approved", kind: "refund", policy: "refund", channel: "webservices", amount, initialTransactionId: d.transactionId,
      transactionId: waiting ? undefined : `WS-${n}`, providerStatus: waiting ? "waiting" : "refunded", createdAt: iso(now()),
      approvalUrl: waiting ? `https://backoffice.example/refunds/approve-${n}` : undefined });
    attempts.push(a);
    note(s.who, "attempt_note", a.idempotentUuid, `refund by API of ${amount} asked by staff`);
    return { ...a };
  };

  const calls: Record<string, (...args: never[]) => unknown> = {
    Gate: () => ({ hasPin: pin !== null, demo }),
    Unlock: (p: string, gesture?: string) => {
      const g = gesture === "shortcut" ? "shortcut" : "corner";
      const until = lockedUntil.get(g) ?? 0;
      if (now() < until) {
        const ms = until - now();
        refuse("ELOCKED_OUT", `Too many wrong PINs: the PIN pad is locked here for ${Math.ceil(ms / 1000)} seconds.`, { retryAfterMs: ms });
      }
      if (pin === null && !demo) refuse("ENOPIN", "No staff PIN has been set yet: choose one first (4 to 8 digits).");
      if (p !== (pin ?? DEMO_PIN)) {
        const n = (failures.get(g) ?? 0) + 1;
        failures.set(g, n);
        note("kiosk", "unlock_failed", g, `wrong staff PIN (${n} in a row)`);
        if (n >= 3) {
          const ms = 30_000 * 2 ** (n - 3);
          lockedUntil.set(g, now() + ms);
          note("system", "pin_lockout", g, `PIN pad locked for ${ms / 1000} s`);
          refuse("ELOCKED_OUT", `Too many wrong PINs: the PIN pad is locked here for ${ms / 1000} seconds.`, { retryAfterMs: ms });
        }
        refuse("EWRONG_PIN", `Wrong PIN. ${3 - n} more wrong PIN(s) and the pad locks.`);
      }
      failures.delete(g);
      lockedUntil.delete(g);
      return open(pin === null);
    },
    ClearLockout: (code: string) => {
      const digits = code.replace(/[ -]/g, "");
      if (!/^\d{16}$/.test(digits)) refuse("EINVALID", "A recovery code has 16 digits.");
      if (digits !== "1234567890123456") refuse("EWRONG_PIN", "The recovery code is not right.");
      failures.clear();
      lockedUntil.clear();
      note("recovery code", "lockout_cleared", "", "every PIN pad lockout lifted with the one-time recovery code");
      return null;
    },
    SetPIN: (p: string) => {
      if (pin !== null) refuse("EPIN_SET", "A staff PIN is already set: unlock with it to change it.");
      if (!/^\d{4,8}$/.test(p)) refuse("EINVALID", "The PIN must have 4 to 8 digits.");
      pin = p;
      note("system", "pin_set", "", "staff PIN set at first run");
      return open(false);
    },
    Touch: (sid: string) => session(sid),
    Lock: (sid: string) => {
      const s = sessions.get(sid);
      sessions.delete(sid);
      if (s) note(s.who, "lock", "", "staff session closed");
      return null;
    },
    ChangePIN: (sid: string, current: string, next: string) => {
      const s = session(sid);
      if (current !== (pin ?? DEMO_PIN)) refuse("EWRONG_PIN", "The current PIN is not right: the PIN was not changed.");
      if (!/^\d{4,8}$/.test(next)) refuse("EINVALID", "The PIN must have 4 to 8 digits.");
      pin = next;
      note(s.who, "pin_changed", "", "staff PIN changed");
      return null;
    },
    About: (sid: string): About => {
      session(sid);
      return { version: "mock", commit: "0000000", buildTime: iso(now()), dataDir: "/tmp/comptoir-mock", demo, mode: String(settings.get("kiosk.mode") ?? "kiosk"), browser: false, links: true, apiRefunds: true };
    },
    Terminal: (sid: string, greet: boolean) => {
      const s = session(sid);
      if (greet) note(s.who, "ping", "", "ping with greeting: reachable=true");
      return panel(greet);
    },
    ChooseTerminal: (sid: string, instance: string) => {
      session(sid);
      const c = candidates.find((x) => x.instance === instance);
      if (!c) refuse("ENOTFOUND", `No terminal called ${instance} was found on the network.`);
      saved = { ...c };
      restartRequired = true;
      terminalNote = `${instance} will be used from the next start.`;
      return panel(false);
    },
    TerminalCertificate: (sid: string, address: string) => {
      session(sid);
      const at = address || candidates[0].address;
      if (!at.startsWith("https://")) refuse("ETERMINAL", `No certificate could be read at ${at}: it is not an https:// address.`);
      const notAfter = new Date(now() + 365 * 86_400_000).toISOString();
      return { address: at, fingerprint: mockFingerprint, subject: "CN=terminal", issuer: "CN=terminal", notAfter, trusted: false };
    },
    SetCloud: (sid: string, choice: CloudChoice) => {
      const s = session(sid);
      if (choice.on && (!choice.serial || !(choice.key || cloud.key))) refuse("EINVALID", "The serial number and the API key are needed. Nothing was saved.");
      cloud = { ...choice, key: choice.key || cloud.key };
      restartRequired = true;
      note(s.who, "terminal_channel", choice.serial,
        choice.on ? (choice.lanFirst ? "the LAN first, the cloud behind it, from the next start" : "the cloud from the next start") : "the LAN from the next start");
      return panel(false);
    },
    PinTerminalCertificate: (sid: string, fingerprint: string) => {
      const s = session(sid);
      pinned = fingerprint;
      https = true;
      restartRequired = true;
      note(s.who, "terminal_pin", fingerprint, fingerprint ? "pinned for the next start" : "pin removed");
      return panel(false);
    },
    ConfirmTerminalDevice: (sid: string, address: string, certificate: string) => {
      const s = session(sid);
      const p = waiting(address, certificate);
      known.push({ address: p.address, first: iso(now()), last: iso(now()), by: "staff" });
      if (p.certificate) pinned = p.certificate;
      pending = undefined;
      note(s.who, "terminal_confirm", address, "confirmed as the terminal");
      return panel(false);
    },
    RefuseTerminalDevice: (sid: string, address: string, certificate: string) => {
      const s = session(sid);
      waiting(address, certificate);
      pending = undefined;
      note(s.who, "terminal_refuse", address, "refused: never used under the terminal's name");
      return panel(false);
    },
    SetTerminalAddress: (sid: string, address: string) => {
      session(sid);
      if (https && address.startsWith("http://")) refuse("EINVALID", "This terminal is set up on HTTPS: its address must start with https://. Nothing was saved.");
      if (address.startsWith("https://")) https = true;
      saved = { instance: "", address };
      restartRequired = true;
      terminalNote = address ? `The terminal at ${address} will be used from the next start.` : "The terminal will be found on the network from the next start.";
      return panel(false);
    },
    Attempts: (sid: string, f: Filter) => {
      session(sid);
      const limit = f.limit > 0 ? f.limit : 50;
      const today = day(now());
      const match = [...attempts]
        .sort((a, b) => b.createdAt.localeCompare(a.createdAt))
        .filter((a) => !f.today || day(Date.parse(a.createdAt)) === today)
        .filter((a) => !f.needsAttention || a.needsAttention)
        .filter((a) => !f.orderNumber || a.orderNumber === f.orderNumber.trim() || a.orderId === f.orderNumber.trim())
        .filter((a) => !f.amount || a.amount === f.amount);
      return { attempts: match.slice(f.offset, f.offset + limit).map(withActions), total: match.length, limit, offset: f.offset };
    },
    History: (sid: string, f: HistoryFilter) => {
      session(sid);
      const limit = f.limit > 0 ? f.limit : 50;
      const all = marked().filter((e) => !f.date || (e.createdAt ?? "").startsWith(f.date));
      return { entries: all.slice(f.offset, f.offset + limit), total: all.length, limit, offset: f.offset };
    },
    Compare: (sid: string, d: string): Comparison => {
      session(sid);
      const dd = d || day(now());
      const inDay = (t?: string) => !!t && day(Date.parse(t)) === dd;
      const terminal = marked().filter((e) => inDay(e.createdAt));
      return {
        day: dd,
        from: dd + "T00:00:00Z",
        to: dd + "T23:59:59Z",
        matched: terminal.filter((e) => e.inJournal).length,
        terminal,
        journal: attempts.filter((a) => inDay(a.createdAt)),
        differences: differences(dd),
      };
    },
    Reverse: (sid: string, uuid: string): ReversalResult => {
      const s = session(sid);
      const a = find(uuid);
      if (a.kind !== "debit") refuse("EINVALID", `Only a card payment can be reversed; this is a ${a.kind}.`);
      if (a.state !== "approved") refuse("EINVALID", `Only an approved payment can be reversed; this one is ${a.state}.`);
      if (!withActions(a).canReverse)
        refuse("EINVALID", "The reversal could not be started: the order has already been given back what it took, or this payment is already reversed. Nothing was sent.");
      const id = `RV-${++seq}`;
      a.reversalTransactionId = id;
      const amount = a.amount + a.giftAmount;
      history.push(entry({ transactionId: id, type: "reversal", amount: a.amount, giftAmount: a.giftAmount, scheme: a.scheme, cartId: a.orderId, reference: a.transactionId, createdAt: iso(now()) }));
      reversals.add(id);
      note(s.who, "reversal", a.transactionId ?? "", `reversal approved ${JSON.stringify({ reversalTransactionId: id, amount })}`);
      return { attemptUuid: uuid, initialTransactionId: a.transactionId ?? "", reversalTransactionId: id, amount };
    },
    ReverseTransaction: (sid: string, txId: string): ReversalResult => {
      const s = session(sid);
      const e = history.find((x) => x.transactionId === txId);
      if (!e) refuse("ENOTFOUND", `The terminal's history of the last 24 hours has no transaction ${txId}.`);
      if (e.type !== "debit" || e.status !== "ok") refuse("EINVALID", `Only an approved card payment can be reversed; this is a ${e.type} (${e.status}).`);
      if (history.some((x) => x.type === "reversal" && x.reference === txId))
        refuse("ETERMINAL", "This payment has already been reversed: the customer was already reimbursed. Nothing more was done.", { terminalCode: "REVERSAL_ALREADY_DONE" });
      const id = `RV-${++seq}`;
      const amount = (e.amount ?? 0) + (e.giftAmount ?? 0);
      history.push(entry({ transactionId: id, type: "reversal", amount: e.amount, giftAmount: e.giftAmount, scheme: e.scheme, reference: txId, createdAt: iso(now()), inJournal: true }));
      reversals.add(id);
      note(s.who, "reversal", txId, `reversal approved ${JSON.stringify({ reversalTransactionId: id, amount })}`);
      return { initialTransactionId: txId, reversalTransactionId: id, amount };
    },
    Refund: (sid: string, orderId: string, amount: number): PaymentView => {
      const s = session(sid);
      if (!Number.isInteger(amount) || amount <= 0) refuse("EINVALID", "The amount to refund must be more than zero.");
      const of = attempts.filter((a) => a.orderId === orderId && a.state === "approved");
      const max = givable(orderId);
      if (amount > max) {
        note(s.who, "refund_refused", orderId, `refund of ${amount} asked, ${max} at most`);
        refuse("EINVALID", max <= 0 ? "Nothing can be refunded on this order: nothing approved is left to refund." : `This order can be refunded ${max} cents at most (what was charged, less what was already refunded).`);
      }
      const id = `TX-R${++seq}`;
      const a = attempt({ idempotentUuid: `0192f0c4-00r${seq}-7000-8000-000000000000`, orderId, orderNumber: of[0]?.orderNumber, orderStatus: "paid", state: "approved", kind: "refund", policy: "refund", amount, transactionId: id, scheme: of[0]?.scheme, createdAt: iso(now()) });
      attempts.push(a);
      history.push(entry({ transactionId: id, type: "refund", amount, scheme: a.scheme, cartId: orderId, createdAt: iso(now()) }));
      return { idempotentUuid: a.idempotentUuid, order: orderId, kind: "refund", policy: "refund", state: "approved", amount, giftAmount: 0, transactionId: id, sendCount: 1 };
    },
    SendLink: (sid: string, r: LinkRequest): AttemptView => {
      const s = session(sid);
      if (!Number.isInteger(r.amount) || r.amount <= 0) refuse("EINVALID", "The amount of the link must be more than zero.");
      if (!r.email?.trim() && !r.phone?.trim()) refuse("EINVALID", "Give the customer's mobile phone number or email address: the provider sends the link there.");
      if (!r.firstName?.trim() || !r.lastName?.trim()) refuse("EINVALID", "Give the customer's first and last names: the provider needs both to send the link.");
      const n = ++seq;
      const a = attempt({ idempotentUuid: `0192f0c4-00l${n}-7000-8000-000000000000`, orderId: `link-mock-${n}`, orderStatus: "open", state: "sent", channel: "link", policy: "counter",
        amount: r.amount, createdAt: iso(now()), link: `https://pay.example/l/${n}`, providerStatus: "pending", canCancelLink: true });
      attempts.push(a);
      note(s.who, "attempt_note", a.idempotentUuid, `payment link of ${r.amount} sent by staff`);
      return { ...a };
    },
    CancelLink: (sid: string, uuid: string): AttemptView => {
      session(sid);
      const a = find(uuid);
      if (!a.canCancelLink) refuse("EINVALID", `This link has already ended (${a.state}): there is nothing to cancel.`);
      Object.assign(a, { state: "cancelled", providerStatus: "ko", canCancelLink: false, orderStatus: "cancelled" });
      return { ...a };
    },
    CaptureLink: (sid: string, uuid: string): AttemptView => {
      session(sid);
      const a = find(uuid);
      if (!a.canCapture) refuse("EINVALID", "Only a paid link whose payment was authorised and not yet captured can be captured.");
      Object.assign(a, { providerStatus: "ok", canCapture: false });
      return { ...a };
    },
    RefundByAPI: refundByAPI,
    RefundTransactionByAPI: (sid: string, txId: string): AttemptView => {
      session(sid);
      const e = history.find((x) => x.transactionId === txId);
      if (!e || e.type !== "debit" || e.status !== "ok") refuse("EINVALID", "Only an approved card payment can be refunded.");
      let d = attempts.find((a) => a.transactionId === txId && a.kind === "debit");
      if (!d) {
        d = attempt({ idempotentUuid: `0192f0c4-00a${++seq}-7000-8000-000000000000`, orderId: `charge-${txId}`, orderStatus: "paid", state: "approved",
          amount: e.amount ?? 0, giftAmount: e.giftAmount ?? 0, transactionId: txId, scheme: e.scheme, createdAt: e.createdAt ?? iso(now()) });
        attempts.push(d);
        e.inJournal = true;
      }
      return refundByAPI(sid, d.idempotentUuid, withActions(d).apiRefundable);
    },
    PrintZ: (sid: string, d: string) => {
      session(sid);
      if (!d || d >= day(now())) refuse("EINVALID", "The day could not be closed: it is not over.");
      const found = closings.find((c) => c.period === "day" && c.name === d);
      if (found) return found;
      const number = closings.length + 1;
      const c = { number, period: "day", name: d, from: d + "T00:00:00Z", to: d + "T23:59:59Z", at: iso(now()), kiosk: "mock", software: "Comptoir mock",
        firstTicket: 0, lastTicket: 0, tickets: 0, byVat: [], byMeans: [], total: 0, totalExclTax: 0, perpetual: 0, fingerprint: `Z${number}-0123456789ab` };
      closings.push(c);
      return c;
    },
    Closings: (sid: string) => {
      session(sid);
      return closings
        .map((c) => ({ number: c.number, period: c.period, name: c.name, at: c.at, tickets: c.tickets, total: c.total, perpetual: c.perpetual,
          currency: "EUR", fingerprint: c.fingerprint ?? "" }))
        .reverse();
    },
    PrintClosing: (sid: string, number: number) => {
      session(sid);
      const c = closings.find((x) => x.number === number);
      if (!c) refuse("ENOTFOUND", `There is no closing number ${number}.`);
      return c;
    },
    Reconcile: (sid: string, d: string): Reconciliation => {
      session(sid);
      const dd = d || day(now());
      const inDay = (t?: string) => !!t && day(Date.parse(t)) === dd;
      const unknown = marked().filter((e) => inDay(e.createdAt) && !e.inJournal && e.status === "ok" && e.type === "debit");
      const lines: ReconcileLine[] = attempts
        .filter((a) => inDay(a.createdAt))
        .map((a) => ({
          journal: { idempotentUuid: a.idempotentUuid, orderId: a.orderId, kind: a.kind, channel: a.channel, state: a.state, amount: a.amount, giftAmount: a.giftAmount, transactionId: a.transactionId, created: a.createdAt },
          terminal: history.filter((e) => e.transactionId && e.transactionId === a.transactionId).map((e) => reconcileEntry(e, "terminal")),
          provider: [],
        }));
      for (const e of unknown) lines.push({ terminal: [reconcileEntry(e, "terminal")], provider: [] });
      const recent = (t?: string) => now() - Date.parse(t ?? "") < 16 * 3600_000;
      const differences: ReconcileDifference[] = unknown.map((e) => ({
        kind: "charged_no_order", source: "terminal", at: e.createdAt ?? iso(now()), transactionId: e.transactionId, otherAmount: (e.amount ?? 0) + (e.giftAmount ?? 0),
        otherStatus: e.status, otherType: e.type, message: "The terminal lists an approved debit that no order of the journal knows.",
        action: recent(e.createdAt) ? "Find its order, or reverse it from staff mode." : "Find its order, or refund it by API from staff mode.",
      }));
      return {
        day: dd, zone: "Europe/Paris", from: dd + "T00:00:00Z", to: dd + "T23:59:59Z", terminalRead: true, providerRead: false,
        providerError: "", lines, differences, needsStaff: differences.length > 0,
        fixes: differences.map((x) => ({ do: recent(x.at) ? "reverse" : "refund_by_api", transactionId: x.transactionId, amount: x.otherAmount })),
      };
    },
    Reprint: (sid: string, uuid: string) => {
      session(sid);
      const a = find(uuid);
      if (a.kind !== "debit" || a.state !== "approved") refuse("EINVALID", `A receipt is for an approved payment; this one is ${a.state}.`);
      return null;
    },
    Share: (sid: string, uuid: string, medium: ShareMedium) => {
      session(sid);
      if (!["email", "sms", "print", "service"].includes(medium)) refuse("EINVALID", "Choose how to send the receipt: email, SMS, print or the customer's preference.");
      const a = find(uuid);
      if (a.kind !== "debit" || a.state !== "approved") refuse("EINVALID", `A receipt is for an approved payment; this one is ${a.state}.`);
      return null;
    },
    ResolveUnknown: (sid: string, uuid: string): Evidence => {
      session(sid);
      const a = find(uuid);
      if (a.state !== "unknown") refuse("EINVALID", `Only a payment whose outcome is unknown needs settling; this one is ${a.state}.`);
      const t = Date.parse(a.createdAt);
      const entries = marked().filter((e) => e.amount === a.amount && e.type === "debit" && Math.abs(Date.parse(e.createdAt ?? "") - t) <= 10 * 60_000);
      const charged = entries.filter((e) => e.status === "ok");
      const hint = charged.some((e) => e.cartId === a.orderId)
        ? "The terminal lists an approved transaction for this very order: the customer was most likely charged."
        : "The terminal lists no transaction of this amount at that time: the customer was most likely not charged.";
      return { attempt: { ...a }, from: iso(t - 10 * 60_000), to: iso(t + 10 * 60_000), entries, charged, hint };
    },
    ConfirmUnknown: (sid: string, uuid: string, d: Decision) => {
      const s = session(sid);
      const a = find(uuid);
      if (a.state !== "unknown") refuse("EINVALID", `Only a payment whose outcome is unknown can be settled; this one is ${a.state}.`);
      a.state = d.paid ? "approved" : "declined";
      a.needsAttention = false;
      a.orderStatus = d.paid ? "paid" : "open";
      if (d.transactionId) a.transactionId = d.transactionId;
      note(s.who, "resolve", uuid, `staff confirmed: ${d.paid ? "paid" : "not paid"}${d.note ? "; note: " + d.note : ""}`);
      return withActions(a);
    },
    AcceptOrder: (sid: string, uuid: string, text: string) => {
      const s = session(sid);
      const a = find(uuid);
      if (!text.trim()) refuse("EINVALID", "Say what you checked before accepting this payment.");
      if (!a.canAccept) refuse("EINVALID", "This order does not need accepting.");
      a.flag = undefined;
      a.canAccept = false;
      note(s.who, "accept_order", a.orderId, text);
      return withActions(a);
    },
    Settings: (sid: string) => {
      session(sid);
      return settingList();
    },
    SaveSetting: (sid: string, key: string, value: unknown) => {
      const s = session(sid);
      if (!(key in defaults)) refuse("EINVALID", `The setting "${key}" cannot be changed from the staff screen.`);
      const reason = why(key, value);
      if (reason) {
        note(s.who, "setting_refused", key, `refused ${JSON.stringify(value)}: ${reason}`);
        refuse("EINVALID", `The value for ${key} was refused (${reason}): the previous value is kept.`);
      }
      note(s.who, "setting", key, `${JSON.stringify(settings.get(key) ?? null)} → ${JSON.stringify(value)}`);
      settings.set(key, value);
      return settingList();
    },
    ReloadCatalog: (sid: string) => {
      const s = session(sid);
      note(s.who, "catalog_reload", "", "catalog reloaded");
      return null;
    },
    Report: (sid: string, d: string) => {
      const s = session(sid);
      const r = report(d || day(now()));
      note(s.who, "report", r.day, `end-of-day report: journal net ${r.journal.net}, terminal net ${r.terminal.net}, ${r.differences.length} difference(s)`);
      return r;
    },
    ReportCSV: (sid: string, d: string) => {
      session(sid);
      const r = report(d || day(now()));
      return { filename: `comptoir-report-${r.day}.csv`, csv: reportCSV(r) };
    },
    PrintReport: (sid: string, d: string) => {
      const s = session(sid);
      note(s.who, "report_printed", d || day(now()), "end-of-day report printed");
      return null;
    },
    Audit: (sid: string, limit: number) => {
      session(sid);
      const list = [...audit].reverse();
      return limit > 0 ? list.slice(0, limit) : list;
    },
    CloseCheckout: async (sid: string) => {
      const s = session(sid);
      note(s.who, "close_checkout", "", "customer screen released");
      const v = await opts.closeCheckout?.();
      return (v ?? { phase: "welcome", language: "fr", currency: "EUR", lines: [], total: 0, taxes: [], voucherEligible: 0 }) as CheckoutView;
    },
    Restart: (sid: string) => {
      session(sid);
      saved = { ...saved };
      restartRequired = false;
      terminalNote = "";
      return null;
    },
    Quit: (sid: string) => {
      session(sid);
      console.info("staff mock: Quit (the desktop app would close now)");
      return null;
    },
  };

  return {
    kind: "mock",
    async call(name, args): Promise<Envelope<unknown>> {
      const fn = calls[name];
      if (!fn) return { ok: false, error: { code: "EBRIDGE", message: `The mock has no staff call ${name}.` } };
      try {
        const value = await (fn as (...a: unknown[]) => unknown)(...args);
        return { ok: true, value: structuredClone(value ?? null) };
      } catch (err) {
        if (err instanceof Refusal) return { ok: false, error: err.error };
        return { ok: false, error: { code: "EINTERNAL", message: String(err) } };
      }
    },
  };
}
