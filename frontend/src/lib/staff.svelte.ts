// The staff mode's state: which staff view is up (none, the PIN pad, the
// staff screens), the session, the last success and error sentences, and
// the confirmation asked before a money action.
//
// The session id lives here, in memory only: never in localStorage, never in
// the URL. It ends on Lock, when the backend says ESESSION, when its
// expiresAt passes, and after idleLockMs without a touch of a staff screen.

import { getContext, setContext } from "svelte";
import type { Language } from "./contract";
import { money, type Params } from "./i18n";
import { isAnyMessageKey, staffTranslate, type AnyMessageKey } from "./i18n/staff";
import type { StaffApi } from "./staffBridge";
import type { About, Envelope, Gate, Gesture, Session, StaffArgs, StaffCallName, StaffError, StaffValue } from "./staffContract";

export type StaffView = "closed" | "pad" | "shell";
export type StaffTab = "terminal" | "payments" | "history" | "settings" | "report" | "audit";
export const staffTabs: readonly StaffTab[] = ["terminal", "payments", "history", "settings", "report", "audit"];

/** The calls made inside a session, and their arguments after the session id. */
type SessionCall = Exclude<StaffCallName, "Gate" | "SetPIN" | "Unlock" | "ClearLockout">;
export type AfterSid<N extends StaffCallName> = StaffArgs<N> extends [string, ...infer R] ? R : never;

export interface ConfirmRequest {
  title: string;
  /** The amount at stake, formatted; shown big. */
  amount?: string;
  detail?: string;
  yes?: string;
}

export interface StaffOptions {
  /** The staff screens lock after this long without a touch. Default 5 min. */
  idleLockMs?: number;
  /** Touch is sent at most this often while staff touch the screens. Default 30 s. */
  touchEveryMs?: number;
  now?: () => number;
}

export class Staff {
  view = $state<StaffView>("closed");
  gate = $state<Gate | null>(null);
  /** Whether the Gate call of this opening of the pad has answered. */
  gateChecked = $state(false);
  session = $state<Session | null>(null);
  about = $state<About | null>(null);
  tab = $state<StaffTab>("terminal");
  language = $state<Language>("en");
  currency = $state("EUR");
  /** The last success, as a sentence. */
  message = $state("");
  /** The last failure; its message is the backend's sentence. */
  error = $state<StaffError | null>(null);
  /** Why the pad is up again (the session ended). */
  padNotice = $state("");
  /** What opened the pad: the customer screen's corner or the keyboard shortcut. The backend counts wrong PINs per origin. */
  gesture = $state<Gesture>("corner");
  /** Actions staff asked for, in flight: their buttons wait. */
  busy = $state(0);
  /** Background reads in flight (a tab's first load): nothing waits for them. */
  loading = $state(0);
  confirming = $state<ConfirmRequest | null>(null);

  readonly idleLockMs: number;
  readonly touchEveryMs: number;
  readonly now: () => number;

  #answer: ((yes: boolean) => void) | null = null;
  #lastActivity = 0;
  #lastTouch = 0;
  #ttlMs = 0;
  #deadline = 0;
  #touching = false;

  constructor(
    readonly api: StaffApi,
    opts: StaffOptions = {},
  ) {
    this.idleLockMs = opts.idleLockMs ?? 5 * 60_000;
    this.touchEveryMs = opts.touchEveryMs ?? 30_000;
    this.now = opts.now ?? (() => Date.now());
  }

  /** active: the pad or the staff screens are up; the customer screen waits underneath. */
  get active(): boolean {
    return this.view === "pad" || (this.view === "shell" && !!this.session);
  }

  t(key: AnyMessageKey, params?: Params): string {
    return staffTranslate(this.language, key, params);
  }

  /** label translates a backend value (a state, a kind) by its key under prefix, or shows it as is. */
  label(prefix: string, value: string | undefined): string {
    const key = `${prefix}.${value ?? ""}`;
    return isAnyMessageKey(key) ? this.t(key) : (value ?? "");
  }

  money(cents: number | undefined, currency?: string): string {
    return money(cents ?? 0, currency || this.currency, this.language);
  }

  /** open shows the PIN pad (hot corner, shortcut), in the kiosk's current language. */
  async open(language?: Language, currency?: string, gesture: Gesture = "corner"): Promise<void> {
    if (this.view !== "closed") return;
    this.gesture = gesture;
    if (language) this.language = language;
    if (currency) this.currency = currency;
    this.padNotice = "";
    this.error = null;
    this.message = "";
    // What the last opening learnt may be stale (a PIN set since): the pad
    // shows no mode until this opening's Gate answers.
    this.gate = null;
    this.gateChecked = false;
    this.view = "pad";
    await this.refreshGate();
  }

  async refreshGate(): Promise<void> {
    const r = await this.api.call("Gate");
    this.gate = r.ok ? r.value : null;
    // A Gate that fails leaves the pad asking for the PIN: the backend
    // answers ENOPIN if none is set, and the pad turns to setup.
    this.gateChecked = true;
  }

  /** cancelPad closes the pad without a session: back to the customer screen. */
  cancelPad(): void {
    if (this.session) return;
    this.view = "closed";
    this.padNotice = "";
  }

  /** unlock checks the PIN; on success the staff screens open. */
  async unlock(pin: string): Promise<StaffError | null> {
    return this.#enter(await this.api.call("Unlock", pin, this.gesture));
  }

  /** setPin sets the first PIN (no PIN yet, not demo) and opens a session. */
  async setPin(pin: string): Promise<StaffError | null> {
    return this.#enter(await this.api.call("SetPIN", pin, this.gesture));
  }

  /** clearLockout lifts every lockout with the one-time recovery code; the PIN is asked next. */
  async clearLockout(code: string): Promise<StaffError | null> {
    const r = await this.api.call("ClearLockout", code, this.gesture);
    return r.ok ? null : r.error;
  }

  async #enter(r: Envelope<Session>): Promise<StaffError | null> {
    if (!r.ok) return r.error;
    if (!r.value?.id) return { code: "EBRIDGE", message: "The session answer is not understood." };
    this.#takeSession(r.value);
    this.padNotice = "";
    this.error = null;
    // A demo-PIN session wears its own banner (staff-demo-pin), which says
    // what the backend's notice says, in the staff's language.
    this.message = r.value.demoPin ? "" : (r.value.notice ?? "");
    this.about = null;
    this.view = "shell";
    const about = await this.load("About");
    if (about.ok) this.about = about.value;
    return null;
  }

  #takeSession(s: Session): void {
    const now = this.now();
    const expires = Date.parse(s.expiresAt);
    // A clock that disagrees with the backend's (browser mode on another
    // machine) must not end the session at once: then the idle lock and the
    // backend's ESESSION are the limits.
    this.#ttlMs = Number.isFinite(expires) && expires > now ? expires - now : this.idleLockMs;
    this.#deadline = now + this.#ttlMs;
    this.#lastActivity = now;
    this.#lastTouch = now;
    this.session = s;
  }

  /**
   * load makes a call within the session. A failure is shown (staff-error);
   * ESESSION sends staff back to the pad. A success leaves the sentences as
   * they are.
   */
  load<N extends SessionCall>(name: N, ...args: AfterSid<N>): Promise<Envelope<StaffValue<N>>> {
    return this.#send(false, name, args);
  }

  /** act is a call staff asked for: the previous sentences go first, and the action buttons wait for it. */
  act<N extends SessionCall>(name: N, ...args: AfterSid<N>): Promise<Envelope<StaffValue<N>>> {
    this.clear();
    return this.#send(true, name, args);
  }

  async #send<N extends SessionCall>(action: boolean, name: N, args: AfterSid<N>): Promise<Envelope<StaffValue<N>>> {
    const s = this.session;
    if (!s) return { ok: false, error: { code: "ESESSION", message: this.t("staff.pin.session_ended") } };
    if (action) this.busy++;
    else this.loading++;
    try {
      const r = await this.api.call(name, ...([s.id, ...args] as unknown as StaffArgs<N>));
      if (this.session?.id !== s.id) {
        // Locked while the call was out: its answer belongs to nobody.
        return r.ok ? { ok: false, error: { code: "ESESSION", message: this.t("staff.pin.session_ended") } } : r;
      }
      if (r.ok) {
        const now = this.now();
        this.#lastTouch = now;
        this.#deadline = now + this.#ttlMs;
      } else if (r.error.code === "ESESSION") {
        this.expired();
      } else {
        this.error = r.error;
        this.message = "";
      }
      return r;
    } finally {
      if (action) this.busy--;
      else this.loading--;
    }
  }

  clear(): void {
    this.message = "";
    this.error = null;
  }

  say(message: string): void {
    this.message = message;
    this.error = null;
  }

  fail(message: string, code = "EINVALID"): void {
    this.error = { code, message };
    this.message = "";
  }

  /** expired: the backend ended the session; the pad asks for the PIN again. */
  expired(): void {
    this.#drop();
    this.padNotice = this.t("staff.pin.session_ended");
    this.view = "pad";
    void this.refreshGate();
  }

  /** lock ends the session and returns to the customer screen. */
  async lock(): Promise<void> {
    const s = this.session;
    this.#drop();
    this.view = "closed";
    if (s) await this.api.call("Lock", s.id);
  }

  #drop(): void {
    this.session = null;
    this.about = null;
    this.error = null;
    this.message = "";
    this.tab = "terminal";
    this.#answer?.(false);
    this.#answer = null;
    this.confirming = null;
  }

  /** activity records a touch of a staff screen; Touch goes out at most every touchEveryMs. */
  activity(): void {
    if (!this.session) return;
    const now = this.now();
    this.#lastActivity = now;
    if (now - this.#lastTouch >= this.touchEveryMs && !this.#touching) {
      this.#touching = true;
      const id = this.session.id;
      this.#lastTouch = now;
      void this.api
        .call("Touch", id)
        .then((r) => {
          if (this.session?.id !== id) return;
          if (r.ok && r.value?.id) this.#takeSession({ ...this.session, ...r.value });
          else if (!r.ok && r.error.code === "ESESSION") this.expired();
        })
        .finally(() => (this.#touching = false));
    }
  }

  /** tick locks the staff screens once idle or past the session's end, unless an action is out. Call it every second. */
  tick(): void {
    // Never while an action staff asked for is out (a refund may take
    // minutes): its answer must reach them.
    if (!this.session || this.busy > 0) return;
    const now = this.now();
    if (now - this.#lastActivity >= this.idleLockMs || now >= this.#deadline) void this.lock();
  }

  /** confirm asks staff a yes/no question in a dialog (confirm-yes / confirm-no). */
  confirm(req: ConfirmRequest): Promise<boolean> {
    this.#answer?.(false);
    this.confirming = req;
    return new Promise((resolve) => {
      this.#answer = resolve;
    });
  }

  answer(yes: boolean): void {
    const a = this.#answer;
    this.#answer = null;
    this.confirming = null;
    a?.(yes);
  }
}

const key = Symbol("staff");

export function provideStaff(s: Staff): Staff {
  setContext(key, s);
  return s;
}

export function useStaff(): Staff {
  const s = getContext<Staff | undefined>(key);
  if (!s) throw new Error("useStaff outside a staff context");
  return s;
}

export const staffContextKey = key;
