// The staff contract: a mirror of backend/staff (payments.go, actions.go,
// settings.go, report.go, audit.go, pin.go), backend/journal's states and
// kinds, backend/payment/view.go and backend/localapi's history entry, field
// for field. Change both together.
//
// Every staff call answers an envelope: the value, or an error whose message
// is a sentence for staff (English, shown as is).

import type { CheckoutView } from "./contract";

// ---- Envelope and errors ----

export type StaffErrorCode =
  | "ELOCKED_OUT"
  | "EWRONG_PIN"
  | "ENOPIN"
  | "EPIN_SET"
  | "ESESSION"
  | "EINVALID"
  | "ENOTFOUND"
  | "ETERMINAL"
  | "EUNKNOWN"
  | "EINTERNAL"
  /** The kiosk is not running, so neither is staff mode (backend/staffapi). */
  | "EUNAVAILABLE"
  /** No such call, or arguments that do not fit: a bug of the caller (backend/staffapi). */
  | "EBADCALL"
  /** The call never got a proper answer: no backend, an HTTP error, a malformed reply. Made by the UI. */
  | "EBRIDGE";

export interface StaffError {
  code: StaffErrorCode | (string & {});
  message: string;
  /** With ELOCKED_OUT: how long the PIN pad stays locked. */
  retryAfterMs?: number;
  /** With ETERMINAL: the terminal's own code and message. */
  terminalCode?: string;
  terminalMessage?: string;
}

export type Envelope<T> = { ok: true; value: T } | { ok: false; error: StaffError };

// ---- journal ----

export type AttemptState =
  | "prepared"
  | "sent"
  | "abort_requested"
  | "approved"
  | "declined"
  | "failed"
  | "cancelled"
  | "unknown";
export type AttemptKind = "debit" | "refund" | "reversal";
export type AttemptPolicy = "kiosk" | "counter" | "refund" | "reversal";
export type OrderStatus = "open" | "paid" | "cancelled" | "needs_attention";

export const attemptStates: readonly AttemptState[] = [
  "prepared",
  "sent",
  "abort_requested",
  "approved",
  "declined",
  "failed",
  "cancelled",
  "unknown",
];

// ---- PIN and session (pin.go) ----

export interface Gate {
  hasPin: boolean;
  demo: boolean;
}

export interface Session {
  id: string;
  who: string;
  /** RFC 3339. */
  expiresAt: string;
  demoPin?: boolean;
  notice?: string;
}

export interface About {
  version: string;
  commit: string;
  buildTime: string;
  dataDir: string;
  demo: boolean;
  mode: string;
  /** True in browser mode (`comptoir serve`): there is no window to quit. */
  browser: boolean;
}

// ---- Terminal (actions.go) ----

export interface TerminalStatus {
  reachable: boolean;
  message?: string;
  greeted?: boolean;
  mode: string;
  clientTimeoutSeconds: number;
  refundTimeoutSeconds: number;
  requestOpenSeconds: number;
  raw?: string;
}

export interface TerminalRef {
  instance: string;
  address: string;
}

export type TerminalSource = "demo" | "flag" | "discovery" | "address";

export interface TerminalPanel {
  status: TerminalStatus;
  source: TerminalSource | (string & {});
  state: string;
  inUse: TerminalRef;
  candidates: TerminalRef[];
  saved: TerminalRef;
  restartRequired: boolean;
  note: string;
}

// ---- Payments (payments.go) ----

export interface Filter {
  today: boolean;
  needsAttention: boolean;
  /** The number the customer was given ("42"), or the order id. */
  orderNumber: string;
  /** Cents; 0: any. */
  amount: number;
  limit: number;
  offset: number;
}

export interface AttemptView {
  idempotentUuid: string;
  orderId: string;
  orderNumber?: string;
  orderStatus?: OrderStatus;
  currency?: string;
  kind: AttemptKind;
  policy: AttemptPolicy;
  state: AttemptState;
  amount: number;
  giftAmount: number;
  transactionId?: string;
  scheme?: string;
  error?: string;
  sendCount: number;
  createdAt: string;
  firstSentAt?: string;
  finalAt?: string;
  needsAttention: boolean;
  /** What the terminal says it charged (or gave back); absent until it said so. */
  chargedAmount?: number;
  /** Of a reversal: the transaction it reverses. */
  initialTransactionId?: string;
  /** A debit's reversal, made or under way. */
  reversal?: ReversalView;
  reversalTransactionId?: string;
  /** The money actions still possible (the journal checks them again). */
  canReverse: boolean;
  /** What the order can still be refunded, cents; 0: no refund. */
  refundableLeft: number;
}

export interface ReversalView {
  uuid: string;
  state: AttemptState;
  transactionId?: string;
  message?: string;
}

export interface AttemptPage {
  attempts: AttemptView[];
  total: number;
  limit: number;
  offset: number;
}

export interface HistoryFilter {
  /** yyyy-mm-dd, UTC as the terminal counts; "": the last 30 days. */
  date: string;
  startTime: string;
  endTime: string;
  /** At most 200. */
  limit: number;
  offset: number;
}

/** localapi.HistoryEntry with what the journal knows of it. */
export interface HistoryEntry {
  status?: string;
  transactionId?: string;
  amount?: number;
  giftAmount?: number;
  currencyCode?: string;
  issuer?: string;
  scheme?: string;
  /** debit, refund, reversal, or another value the terminal sends. */
  type?: string;
  customer?: { firstName?: string; lastName?: string; email?: string; phone?: string; birthDate?: string };
  reference?: string;
  cartId?: string;
  appVersion?: string;
  createdAt?: string;
  created?: string;
  inJournal: boolean;
  attemptUuid?: string;
  attemptState?: AttemptState;
  orderId?: string;
}

export interface HistoryPage {
  entries: HistoryEntry[];
  total: number;
  limit: number;
  offset: number;
}

export type DifferenceKind = "terminal_only" | "journal_only" | "amount_mismatch" | "state_mismatch" | "reversal_unknown";

export interface Difference {
  kind: DifferenceKind | (string & {});
  message: string;
  at: string;
  transactionId?: string;
  attemptUuid?: string;
  orderId?: string;
  /** amount + gift, cents */
  journalAmount?: number;
  terminalAmount?: number;
  journalState?: AttemptState;
  terminalStatus?: string;
}

export interface Comparison {
  day: string;
  from: string;
  to: string;
  matched: number;
  terminal: HistoryEntry[];
  journal: AttemptView[];
  differences: Difference[];
}

// ---- Actions (actions.go) ----

/** staff.Decision: settling an unknown outcome. */
export interface Decision {
  paid: boolean;
  note: string;
  /** The history's transaction staff recognised as this payment, or "". */
  transactionId: string;
}

export interface ReversalResult {
  attemptUuid?: string;
  reversalUuid?: string;
  initialTransactionId: string;
  reversalTransactionId: string;
  /** amount + giftAmount of the original, cents */
  amount: number;
}

/** payment.View */
export interface PaymentView {
  idempotentUuid: string;
  order: string;
  kind: AttemptKind;
  policy: AttemptPolicy;
  state: AttemptState;
  amount: number;
  giftAmount: number;
  transactionId?: string;
  message?: string;
  sendCount: number;
  abort?: string;
  chargedDespiteCancel?: boolean;
  orderPaid?: boolean;
}

/** The media of /share-receipt (localapi's Share* constants). */
export type ShareMedium = "print" | "email" | "sms" | "service";
export const shareMedia: readonly ShareMedium[] = ["print", "email", "sms", "service"];

export interface Evidence {
  attempt: AttemptView;
  from: string;
  to: string;
  entries: HistoryEntry[];
  charged: HistoryEntry[];
  hint: string;
}

// ---- Settings (settings.go; keys and shapes: backend/kiosk/settings.go) ----

export interface Setting {
  key: string;
  /** What the kiosk uses now. */
  value: unknown;
  /** What is stored; null when nothing is. */
  stored: unknown;
  ignored?: boolean;
}

export const SettingMode = "kiosk.mode";
export const SettingLanguages = "kiosk.languages";
export const SettingDefaultLanguage = "kiosk.default_language";
export const SettingCurrency = "kiosk.currency";
export const SettingIdleSeconds = "kiosk.idle_seconds";
export const SettingVoucherCap = "kiosk.meal_voucher_cap";
export const SettingMerchant = "receipt.merchant";
export const SettingReceiptFormat = "receipt.format";
export const SettingReceiptColumns = "receipt.columns";

export interface Merchant {
  name: string;
  address: string[];
  vatNumber: string;
  footer: string[];
  qrUrl: string;
}

// ---- Report (report.go) ----

export interface Total {
  kind: "debit" | "refund" | "reversal" | (string & {});
  scheme?: string;
  count: number;
  /** cents, tips excluded */
  amount: number;
  gift: number;
}

export interface Totals {
  byScheme: Total[];
  byKind: Total[];
  net: number;
}

export interface Report {
  day: string;
  currency: string;
  locale: string;
  generatedAt: string;
  journal: Totals;
  terminal: Totals;
  differences: Difference[];
}

export interface ReportFile {
  filename: string;
  csv: string;
}

// ---- Audit (audit.go) ----

export interface AuditEntry {
  at: string;
  who: string;
  action: string;
  subject?: string;
  detail?: string;
  raw?: unknown;
}

// ---- The calls ----

/** The staff calls, by name, with their arguments (sid first where a session is needed). */
export interface StaffCalls {
  Gate(): Gate;
  SetPIN(pin: string): Session;
  Unlock(pin: string): Session;
  Touch(sid: string): Session;
  Lock(sid: string): null;
  ChangePIN(sid: string, current: string, next: string): null;
  About(sid: string): About;
  Terminal(sid: string, greet: boolean): TerminalPanel;
  ChooseTerminal(sid: string, instance: string): TerminalPanel;
  SetTerminalAddress(sid: string, address: string): TerminalPanel;
  Attempts(sid: string, filter: Filter): AttemptPage;
  History(sid: string, filter: HistoryFilter): HistoryPage;
  Compare(sid: string, day: string): Comparison;
  Reverse(sid: string, uuid: string): ReversalResult;
  ReverseTransaction(sid: string, transactionId: string): ReversalResult;
  Refund(sid: string, orderId: string, amountCents: number): PaymentView;
  Reprint(sid: string, uuid: string): null;
  Share(sid: string, uuid: string, medium: ShareMedium): null;
  ResolveUnknown(sid: string, uuid: string): Evidence;
  ConfirmUnknown(sid: string, uuid: string, decision: Decision): AttemptView;
  Settings(sid: string): Setting[];
  /** value is the setting's JSON value itself (a string, a number, an array, an object). */
  SaveSetting(sid: string, key: string, value: unknown): Setting[];
  ReloadCatalog(sid: string): null;
  Report(sid: string, day: string): Report;
  ReportCSV(sid: string, day: string): ReportFile;
  PrintReport(sid: string, day: string): null;
  Audit(sid: string, limit: number): AuditEntry[];
  CloseCheckout(sid: string): CheckoutView;
  Quit(sid: string): null;
  /** Desktop only: stops the kiosk and starts it again (a terminal choice then applies); refused while a payment is out. */
  Restart(sid: string): null;
}

export type StaffCallName = keyof StaffCalls;
export type StaffArgs<N extends StaffCallName> = Parameters<StaffCalls[N]>;
export type StaffValue<N extends StaffCallName> = ReturnType<StaffCalls[N]>;

/** The calls that need no session. */
export const sessionless: ReadonlySet<StaffCallName> = new Set<StaffCallName>(["Gate", "SetPIN", "Unlock"]);
