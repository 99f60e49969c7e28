// The way into staff mode from the customer screens, and all of staff mode
// the customer's first screen carries: the hot corner's tap count, the
// keyboard shortcut, and whether staff mode is up (then the customer screen
// waits underneath, inert). Staff mode itself (its state, the PIN pad, the
// staff screens and their words) is loaded by the first opening
// (src/staff/mode.ts): a customer never runs it, so the customer bundle
// does not carry it (frontend/scripts/bundle.mjs, src/bundle.test.ts).

import type { Component } from "svelte";
import type { Language } from "./contract";
import type { Staff, StaffOptions } from "./staff.svelte";
import type { StaffApi } from "./staffBridge";
import type { Gesture } from "./staffContract";

/** What src/staff/mode.ts gives the door. */
export interface StaffMode {
  Staff: typeof Staff;
  StaffRoot: Component<{ staff: Staff }>;
  defaultStaffApi: StaffApi;
}

export interface StaffDoorOptions {
  /** The staff calls' transport; default: the process-wide one (staffBridge.ts). */
  api?: StaffApi;
  options?: StaffOptions;
  /** Loads staff mode; default: import() of src/staff/mode.ts. */
  load?: () => Promise<StaffMode>;
  /**
   * Staff mode could not be loaded. The next opening tries again. In browser
   * mode this is a page older than its server (the server was upgraded
   * under it, and the page's chunk names are gone): App reloads the page.
   */
  onLoadFailed?: (err: unknown) => void;
}

/** TapCounter says when `count` taps fell within `windowMs`. */
export class TapCounter {
  #taps: number[] = [];
  constructor(
    readonly count = 5,
    readonly windowMs = 3000,
  ) {}

  tap(now: number): boolean {
    this.#taps = [...this.#taps, now].filter((t) => now - t < this.windowMs).slice(-this.count);
    if (this.#taps.length >= this.count) {
      this.#taps = [];
      return true;
    }
    return false;
  }

  reset(): void {
    this.#taps = [];
  }
}

/** isStaffShortcut: Ctrl+Alt+S (by key or by physical key, whatever the layout). */
export function isStaffShortcut(e: KeyboardEvent): boolean {
  return e.ctrlKey && e.altKey && !e.metaKey && (e.key === "s" || e.key === "S" || e.code === "KeyS");
}


export class StaffDoor {
  /** Staff mode's state, once loaded: null until staff first open it. */
  staff = $state.raw<Staff | null>(null);
  /** Staff mode's root component, once loaded. */
  root = $state.raw<StaffMode["StaffRoot"] | null>(null);
  /** The clock the hot corner counts taps by (StaffOptions.now). */
  readonly now: () => number;

  #loading: Promise<StaffMode> | null = null;

  constructor(readonly opts: StaffDoorOptions = {}) {
    this.now = opts.options?.now ?? (() => Date.now());
  }

  /** active: the PIN pad or the staff screens are up; the customer screen waits underneath. */
  get active(): boolean {
    return this.staff?.active ?? false;
  }

  /** closed: no staff view is up (or staff mode was never loaded): the way in is open. */
  get closed(): boolean {
    return !this.staff || this.staff.view === "closed";
  }

  /** open loads staff mode if need be, then shows the PIN pad in the kiosk's language. */
  async open(language: Language, currency: string, gesture: Gesture): Promise<void> {
    if (!this.closed) return;
    let mode: StaffMode;
    try {
      mode = await (this.#loading ??= (this.opts.load ?? (() => import("../staff/mode")))());
    } catch (err) {
      this.#loading = null;
      this.opts.onLoadFailed?.(err);
      return;
    }
    this.staff ??= new mode.Staff(this.opts.api ?? mode.defaultStaffApi, this.opts.options);
    this.root ??= mode.StaffRoot;
    await this.staff.open(language, currency, gesture);
  }
}
