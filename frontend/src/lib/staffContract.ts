// Staff mode's contract. Its types are generated from the Go types of
// backend/staff, backend/staffapi and the types they reach (journal states,
// payment.View, the terminal's history entry) into staffContract.gen.ts
// (`make contract`; CI fails when that file is not current). This file adds
// what Go's types cannot say: the envelope as a union, the error codes the
// UI itself makes, the UI's names for a few generated types, and each call's
// arguments (backend/staffapi/calls.go).
//
// Every staff call answers an envelope: the value, or an error whose message
// is a sentence for staff (English, shown as is).

import type { CheckoutView } from "./contract";
import * as G from "./staffContract.gen";
import type {
  AttemptPage,
  AttemptView,
  AuditEntry,
  About,
  Certificate,
  CloudChoice,
  Comparison,
  Decision,
  ErrorView,
  Evidence,
  Filter,
  Gate,
  HistoryFilter,
  HistoryPage,
  LinkRequest,
  PaymentView,
  Reconciliation,
  Report,
  ReversalResult,
  Session,
  Setting,
  TerminalPanel,
} from "./staffContract.gen";

export * from "./staffContract.gen";

// ---- Envelope and errors ----

export type StaffErrorCode =
  | typeof G.ELOCKEDOUT
  | typeof G.EWRONGPIN
  | typeof G.ENOPIN
  | typeof G.EPINSET
  | typeof G.ESESSION
  | typeof G.EINVALID
  | typeof G.ENOTFOUND
  | typeof G.ETERMINAL
  | typeof G.EUNKNOWN
  | typeof G.EINTERNAL
  | typeof G.EUNAVAILABLE
  | typeof G.EBADCALL
  /** The call never got a proper answer: no backend, an HTTP error, a malformed reply. Made by the UI. */
  | "EBRIDGE";

export interface StaffError extends ErrorView {
  code: StaffErrorCode | (string & {});
}

export type Envelope<T> = { ok: true; value: T } | { ok: false; error: StaffError };

// ---- The UI's names ----

export type AttemptState = G.JournalState;
export type AttemptKind = G.JournalKind;
export type AttemptPolicy = G.JournalPolicy;
export type OrderStatus = G.JournalOrderStatus;
export type TerminalRef = G.Endpoint;
export type Merchant = G.MerchantSetting;
export type ReportFile = G.CSVExport;
export type DifferenceKind =
  | typeof G.DiffTerminalOnly
  | typeof G.DiffJournalOnly
  | typeof G.DiffAmount
  | typeof G.DiffState
  | typeof G.DiffReversalUnknown;

// Every state in the order of an attempt's life (the filters' order). A
// Record, so that a state added in Go fails the type check until it has its
// place here.
const stateOrder: Record<AttemptState, number> = {
  prepared: 0,
  sent: 1,
  abort_requested: 2,
  approved: 3,
  declined: 4,
  failed: 5,
  cancelled: 6,
  unknown: 7,
};
export const attemptStates: readonly AttemptState[] = (Object.keys(stateOrder) as AttemptState[]).sort(
  (a, b) => stateOrder[a] - stateOrder[b],
);

/** The media a receipt is shared on, the printer first. */
export type ShareMedium = G.TerminalMedium;
export const shareMedia: readonly ShareMedium[] = ["print", "email", "sms", "service"];

// ---- The calls ----

/** The staff calls, by name, with their arguments (sid first where a session is needed). */
export interface StaffCalls {
  Gate(): Gate;
  /** The PIN pad's calls say which gesture opened it: the backend counts wrong PINs per origin. */
  SetPIN(pin: string, gesture?: G.Gesture): Session;
  Unlock(pin: string, gesture?: G.Gesture): Session;
  /** The one-time recovery code (`comptoir pin --recovery-code`) lifts every lockout; the PIN is asked next. */
  ClearLockout(code: string, gesture?: G.Gesture): null;
  Touch(sid: string): Session;
  Lock(sid: string): null;
  ChangePIN(sid: string, current: string, next: string): null;
  About(sid: string): About;
  Terminal(sid: string, greet: boolean): TerminalPanel;
  ChooseTerminal(sid: string, instance: string): TerminalPanel;
  SetTerminalAddress(sid: string, address: string): TerminalPanel;
  /** The certificate an https:// address presents ("": the terminal in use); nothing is sent but the handshake. */
  TerminalCertificate(sid: string, address: string): Certificate;
  /** Trust only this certificate from the next start ("": the system's roots again). */
  PinTerminalCertificate(sid: string, fingerprint: string): TerminalPanel;
  /** The channel for the next start: the provider's cloud (its URL, the terminal's serial, the key; "" keeps the saved key) or the LAN. */
  SetCloud(sid: string, choice: CloudChoice): TerminalPanel;
  /**
   * Takes the device waiting under the terminal's name (its address and certificate as shown in `pending`) for the
   * terminal: at once, or once no payment is open on the terminal. Audited.
   */
  ConfirmTerminalDevice(sid: string, address: string, certificate: string): TerminalPanel;
  /** Refuses it: never used, nor offered again, from that address with that certificate. Audited. */
  RefuseTerminalDevice(sid: string, address: string, certificate: string): TerminalPanel;
  Attempts(sid: string, filter: Filter): AttemptPage;
  History(sid: string, filter: HistoryFilter): HistoryPage;
  Compare(sid: string, day: string): Comparison;
  Reverse(sid: string, uuid: string): ReversalResult;
  ReverseTransaction(sid: string, transactionId: string): ReversalResult;
  Refund(sid: string, orderId: string, amountCents: number): PaymentView;
  /** A new order of the amount, paid on a link the provider sends the customer by SMS and/or email. */
  SendLink(sid: string, request: LinkRequest): AttemptView;
  /** Cancels a running link: its cart decides (paid in full first means paid). */
  CancelLink(sid: string, uuid: string): AttemptView;
  /** Captures all of a paid link whose payment was only authorised. */
  CaptureLink(sid: string, uuid: string): AttemptView;
  /** Refunds part or all of an approved debit without the card (the provider's Webservices); pending or waiting go on by themselves. */
  RefundByAPI(sid: string, uuid: string, amountCents: number): AttemptView;
  /** Refunds in full without the card a charge of the provider's (the journal records it first when it does not know it). */
  RefundTransactionByAPI(sid: string, transactionId: string): AttemptView;
  /** A day of the journal beside the terminal's history and the provider's record, with the fix of each difference. */
  Reconcile(sid: string, day: string): Reconciliation;
  Reprint(sid: string, uuid: string): null;
  Share(sid: string, uuid: string, medium: ShareMedium): null;
  ResolveUnknown(sid: string, uuid: string): Evidence;
  ConfirmUnknown(sid: string, uuid: string, decision: Decision): AttemptView;
  AcceptOrder(sid: string, uuid: string, note: string): AttemptView;
  Settings(sid: string): Setting[];
  /** value is the setting's JSON value itself (a string, a number, an array, an object). */
  SaveSetting(sid: string, key: string, value: unknown): Setting[];
  ReloadCatalog(sid: string): null;
  Report(sid: string, day: string): Report;
  ReportCSV(sid: string, day: string): ReportFile;
  PrintReport(sid: string, day: string): null;
  /** Records the closing (Z) of a day that is over, once, and prints it. */
  PrintZ(sid: string, day: string): G.FiscalClosing;
  /** Every closing recorded (days, months, fiscal years), newest first. */
  Closings(sid: string): G.ClosingSummary[];
  /** Prints a recorded closing again. */
  PrintClosing(sid: string, number: number): G.FiscalClosing;
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
export const sessionless: ReadonlySet<StaffCallName> = new Set<StaffCallName>(["Gate", "SetPIN", "Unlock", "ClearLockout"]);
