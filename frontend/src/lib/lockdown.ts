// The navigation lock: a self-service kiosk stays on the app. Whatever a
// customer clicks, drops, presses or pinches, no other page opens, the page
// does not go back or reload, there is no context menu, no zoom, no browser
// tool (print, save, source, devtools).
//
// Everything here only cancels the browser's default action (preventDefault,
// in the capture phase): the app's own handlers still see every event, so
// Ctrl+Alt+S (the staff PIN pad), the hot corner's pointerdown, the PIN pad's
// keys and typing in the staff screens' fields are untouched.
//
// The desktop webview adds its own guards (no default context menu, no
// devtools in production builds); this is the part that also holds in a
// browser (`comptoir serve` under a kiosk-mode Chromium) and covers what the
// webviews do not, such as links and window.open.

/** Browser keys with no other use than leaving or reloading the page. */
const NAVIGATION_KEYS = new Set(["BrowserBack", "BrowserForward", "BrowserHome", "BrowserRefresh", "BrowserSearch", "BrowserFavorites"]);

/**
 * Ctrl/Cmd + a letter is the browser's (reload, print, save, history,
 * downloads, address bar, new tab...) except, in a field, these editing
 * keys: select all, copy, cut, paste, undo, redo.
 */
const FIELD_LETTERS = new Set(["a", "c", "x", "v", "z", "y"]);

/** Ctrl+Shift (Cmd+Option on a Mac) + these: the devtools (inspect, console, pick). */
const DEVTOOLS_LETTERS = new Set(["i", "j", "c"]);

/** Zoom in, out and reset, by character or by physical key. */
const ZOOM_KEYS = new Set(["+", "-", "=", "_", "0"]);
const ZOOM_CODES = new Set(["Equal", "Minus", "Digit0", "NumpadAdd", "NumpadSubtract", "Numpad0"]);

/** Fields a customer or staff member types in: keys there keep their editing meaning. */
const FIELDS = 'input, textarea, select, [contenteditable]:not([contenteditable="false"])';

/** asElement is the event's target when it is an element (not a text node, the window...). */
function asElement(t: EventTarget | null): Element | null {
  return t && typeof (t as Element).closest === "function" ? (t as Element) : null;
}

function inField(t: EventTarget | null): boolean {
  const el = asElement(t);
  return !!el && ((el as HTMLElement).isContentEditable === true || el.closest(FIELDS) !== null);
}

/** letter is the key's letter, lowercase; by physical key when the layout is not Latin. */
function letter(e: KeyboardEvent): string {
  if (/^[a-z]$/i.test(e.key)) return e.key.toLowerCase();
  return /^Key[A-Z]$/.test(e.code) ? e.code.slice(3).toLowerCase() : "";
}

/**
 * blockedKey says whether a keydown would make the browser leave, reload,
 * zoom or open one of its tools. Ctrl+Alt combinations are left alone: they
 * are the staff shortcut (Ctrl+Alt+S) and AltGr, which types @, {, [... on
 * many layouts.
 */
export function blockedKey(e: KeyboardEvent): boolean {
  const { key } = e;
  if (NAVIGATION_KEYS.has(key)) return true;
  // F1 to F12: help, find, reload, address bar, caret browsing, fullscreen, devtools.
  if (/^F([1-9]|1[0-2])$/.test(key)) return true;
  // Back, forward, home: Alt+arrows (even from a field, where browsers still
  // navigate), Backspace outside a field; Cmd+[ and Cmd+] on a Mac.
  if (e.altKey && !e.ctrlKey && !e.metaKey && (key === "ArrowLeft" || key === "ArrowRight" || key === "Home")) return true;
  if (key === "Backspace" && !inField(e.target)) return true;
  // Clear browsing data: a settings page in a new tab.
  if ((e.ctrlKey || e.metaKey) && e.shiftKey && (key === "Delete" || key === "Backspace")) return true;
  if (e.metaKey && (key === "[" || key === "]")) return true;
  if (e.metaKey && e.altKey && DEVTOOLS_LETTERS.has(letter(e))) return true;
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return false;
  if (ZOOM_KEYS.has(key) || ZOOM_CODES.has(e.code)) return true;
  const l = letter(e);
  if (l === "") return false;
  if (e.shiftKey && DEVTOOLS_LETTERS.has(l)) return true;
  return !(inField(e.target) && FIELD_LETTERS.has(l));
}

/** newWindow: a link's or form's target names another window than this one. */
function newWindow(target: string | null): boolean {
  const t = (target ?? "").trim().toLowerCase();
  return t !== "" && t !== "_self";
}

/** sameOrigin: url is on the app's own scheme and host (a blob: URL, by the origin that made it). */
function sameOrigin(url: URL, home: URL): boolean {
  if (url.protocol === "blob:") {
    try {
      url = new URL(url.pathname);
    } catch {
      return false;
    }
  }
  // Scheme and host rather than URL.origin: the desktop's wails:// scheme
  // has an opaque origin ("null"), equal to nothing.
  return url.protocol === home.protocol && url.host === home.host;
}

/**
 * allowedLink says whether following a link keeps the kiosk on the app: a
 * link to the app's own origin, in this window, with no download; or a
 * download of a blob: URL the app made (the staff CSV export).
 */
export function allowedLink(a: Element, home: URL): boolean {
  let url: URL;
  try {
    url = new URL(a.getAttribute("href") ?? "", a.ownerDocument.baseURI);
  } catch {
    return false;
  }
  if (newWindow(a.getAttribute("target"))) return false;
  if (a.hasAttribute("download")) return url.protocol === "blob:" && sameOrigin(url, home);
  return sameOrigin(url, home);
}

/** The history entry pushed over the app's own, so that Back stays on it. */
const HISTORY_MARK = { comptoirLockdown: true };

/**
 * installLockdown locks win on the app (see the top of this file) and returns
 * the function that undoes it (for tests: the history entry pushed stays).
 */
export function installLockdown(win: Window): () => void {
  const doc = win.document;
  const home = new URL(win.location.href);
  const undo: (() => void)[] = [];
  const on = <E extends Event>(target: EventTarget, type: string, handler: (e: E) => void) => {
    // Not passive: cancelling is the point (wheel and touch listeners on the
    // window would be passive by default).
    const opts = { capture: true, passive: false };
    const h = handler as EventListener;
    target.addEventListener(type, h, opts);
    undo.push(() => target.removeEventListener(type, h, opts));
  };
  const cancel = (e: Event) => e.preventDefault();

  // Links: only plain left clicks on the app's own links go through. Middle,
  // Ctrl, Shift, Alt and Cmd clicks open new pages or download: never.
  const link = (e: MouseEvent) => {
    const a = asElement(e.target)?.closest("a[href], area[href]");
    if (!a) return;
    const plain = e.type === "click" && e.button === 0 && !e.ctrlKey && !e.metaKey && !e.shiftKey && !e.altKey;
    if (!plain || !allowedLink(a, home)) e.preventDefault();
  };
  on(doc, "click", link);
  on(doc, "auxclick", link);

  // Forms: a submission to another origin or another window.
  on(doc, "submit", (e: SubmitEvent) => {
    const form = asElement(e.target) as HTMLFormElement | null;
    if (form?.tagName !== "FORM") return;
    const by = (name: string) => e.submitter?.getAttribute(`form${name}`) ?? form.getAttribute(name) ?? "";
    let action: URL;
    try {
      action = new URL(by("action"), doc.baseURI);
    } catch {
      e.preventDefault();
      return;
    }
    if (newWindow(by("target")) || !sameOrigin(action, home)) e.preventDefault();
  });

  // Drag and drop: a URL or a file dropped on the page would be opened.
  // dragover must be cancelled for drop to be delivered, and drop cancelled
  // for the browser not to open what was dropped. Links and images are not
  // dragged out either (to another window, which would open them).
  on(doc, "dragenter", cancel);
  on(doc, "dragover", cancel);
  on(doc, "drop", cancel);
  on(doc, "dragstart", (e: DragEvent) => {
    if (asElement(e.target)?.closest("a[href], img")) e.preventDefault();
  });

  // No context menu (Back, Reload, Inspect, Save image...).
  on(doc, "contextmenu", cancel);

  on(win, "keydown", (e: KeyboardEvent) => {
    if (blockedKey(e)) e.preventDefault();
  });

  // The mouse's back and forward buttons (3 and 4): Chromium navigates on
  // mouseup, others on mousedown or auxclick.
  const sideButton = (e: MouseEvent) => {
    if (e.button === 3 || e.button === 4) e.preventDefault();
  };
  for (const type of ["mousedown", "mouseup", "auxclick"]) on(win, type, sideButton);

  // Zoom: Ctrl+wheel (and a touchpad's pinch, delivered as one), WebKit's
  // gesture events (Safari, the macOS webview). Touch pinch is off in CSS
  // (touch-action in app.css) and the viewport meta (index.html).
  on(win, "wheel", (e: WheelEvent) => {
    if (e.ctrlKey) e.preventDefault();
  });
  for (const type of ["gesturestart", "gesturechange", "gestureend"]) on(doc, type, cancel);

  // window.open: no popups, whoever asks.
  const open = win.open;
  win.open = () => null;
  undo.push(() => {
    win.open = open;
  });

  // History: an entry of our own on top, pushed back whenever Back reaches
  // the one below, so that history never leaves the app.
  const stay = () => win.history.pushState(HISTORY_MARK, "", win.location.href);
  stay();
  on(win, "popstate", stay);

  return () => {
    for (const u of undo.splice(0).reverse()) u();
  };
}
