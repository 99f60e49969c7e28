import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { allowedLink, blockedKey, installLockdown } from "./lockdown";
import { download } from "./staffFormat";

const here = location.origin; // jsdom's, http://localhost:3000
let uninstall: () => void;

beforeEach(() => {
  document.body.innerHTML = "";
  uninstall = installLockdown(window);
});

afterEach(() => uninstall());

/**
 * prevented dispatches ev on el and says whether the lockdown cancelled it.
 * A window listener after it cancels whatever is left, so that jsdom does not
 * try to follow a link.
 */
function prevented(el: EventTarget, ev: Event): boolean {
  let seen: boolean | undefined;
  const last = (e: Event) => {
    seen = e.defaultPrevented;
    e.preventDefault();
  };
  window.addEventListener(ev.type, last);
  try {
    el.dispatchEvent(ev);
  } finally {
    window.removeEventListener(ev.type, last);
  }
  if (seen === undefined) throw new Error(`${ev.type} did not reach the window`);
  return seen;
}

function anchor(href: string, attrs: Record<string, string> = {}): HTMLAnchorElement {
  const a = document.createElement("a");
  a.href = href;
  for (const [k, v] of Object.entries(attrs)) a.setAttribute(k, v);
  a.textContent = "link";
  document.body.append(a);
  return a;
}

const click = (init: MouseEventInit = {}, type = "click") => new MouseEvent(type, { bubbles: true, cancelable: true, button: 0, ...init });
const key = (k: string, init: KeyboardEventInit = {}) => new KeyboardEvent("keydown", { bubbles: true, cancelable: true, key: k, ...init });

describe("links", () => {
  it("follows the app's own links on a plain click", () => {
    expect(prevented(anchor(`${here}/#top`), click())).toBe(false);
    expect(prevented(anchor("#menu"), click())).toBe(false);
  });

  it("does not follow a link to another origin, nor its children", () => {
    expect(prevented(anchor("https://example.com/"), click())).toBe(true);
    const a = anchor("http://localhost:3001/");
    const span = document.createElement("span");
    a.append(span);
    expect(prevented(span, click())).toBe(true);
    expect(prevented(anchor("javascript:void 0"), click())).toBe(true);
  });

  it("does not follow a link with a target, even to the app", () => {
    expect(prevented(anchor(`${here}/`, { target: "_blank" }), click())).toBe(true);
    expect(prevented(anchor(`${here}/`, { target: "other" }), click())).toBe(true);
    expect(prevented(anchor(`${here}/#x`, { target: "_self" }), click())).toBe(false);
  });

  it("cancels middle and modified clicks on any link", () => {
    const a = anchor("#menu");
    expect(prevented(a, click({ button: 1 }, "auxclick"))).toBe(true);
    for (const mod of ["ctrlKey", "metaKey", "shiftKey", "altKey"]) expect(prevented(a, click({ [mod]: true })), mod).toBe(true);
  });

  it("leaves clicks elsewhere alone", () => {
    const b = document.createElement("button");
    document.body.append(b);
    expect(prevented(b, click())).toBe(false);
    expect(prevented(b, click({ ctrlKey: true }))).toBe(false);
  });

  it("downloads only a blob: URL of the app's own", () => {
    expect(prevented(anchor(`blob:${here}/5b1c`, { download: "report.csv" }), click())).toBe(false);
    expect(prevented(anchor("blob:https://example.com/5b1c", { download: "x.csv" }), click())).toBe(true);
    expect(prevented(anchor(`${here}/api/report.csv`, { download: "report.csv" }), click())).toBe(true);
    expect(prevented(anchor("https://example.com/x.csv", { download: "" }), click())).toBe(true);
  });

  it("still lets the staff CSV export download", () => {
    vi.useFakeTimers();
    const create = vi.spyOn(URL, "createObjectURL").mockReturnValue(`blob:${here}/0f3e`);
    const revoke = vi.spyOn(URL, "revokeObjectURL").mockImplementation(() => {});
    const clicks: { download: string; href: string; prevented: boolean }[] = [];
    const seen = (e: Event) => {
      const a = e.target as HTMLAnchorElement;
      clicks.push({ download: a.download, href: a.href, prevented: e.defaultPrevented });
      e.preventDefault(); // jsdom does not download
    };
    window.addEventListener("click", seen);
    try {
      expect(download("report-2025-01-10.csv", "kind;amount\n")).toBe(true);
      expect(clicks).toEqual([{ download: "report-2025-01-10.csv", href: `blob:${here}/0f3e`, prevented: false }]);
    } finally {
      window.removeEventListener("click", seen);
      vi.runAllTimers();
      vi.useRealTimers();
      expect(revoke).toHaveBeenCalledOnce();
      create.mockRestore();
      revoke.mockRestore();
    }
  });

  it("compares scheme and host, for the desktop's wails:// origin", () => {
    const home = new URL("wails://wails/");
    const a = (href: string, attrs: Record<string, string> = {}) => {
      const el = document.createElement("a");
      el.setAttribute("href", href);
      for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
      return el;
    };
    expect(allowedLink(a("wails://wails/#x"), home)).toBe(true);
    expect(allowedLink(a("blob:wails://wails/0f3e", { download: "r.csv" }), home)).toBe(true);
    expect(allowedLink(a("wails://other/"), home)).toBe(false);
    expect(allowedLink(a("https://example.com/"), home)).toBe(false);
    expect(allowedLink(a("blob:null/0f3e", { download: "r.csv" }), home)).toBe(false);
  });
});

describe("forms", () => {
  const submit = (action: string, target?: string) => {
    const form = document.createElement("form");
    form.action = action;
    if (target) form.target = target;
    document.body.append(form);
    return prevented(form, new Event("submit", { bubbles: true, cancelable: true }));
  };

  it("are not submitted to another origin or window", () => {
    expect(submit("https://example.com/")).toBe(true);
    expect(submit(`${here}/`, "_blank")).toBe(true);
    expect(submit(`${here}/`)).toBe(false);
  });

  it("follow the submit button's formaction and formtarget", () => {
    const form = document.createElement("form");
    form.action = `${here}/`;
    const button = document.createElement("button");
    form.append(button);
    document.body.append(form);
    const send = () => prevented(form, new SubmitEvent("submit", { bubbles: true, cancelable: true, submitter: button }));
    expect(send()).toBe(false);
    button.setAttribute("formaction", "https://example.com/");
    expect(send()).toBe(true);
    button.setAttribute("formaction", `${here}/`);
    button.setAttribute("formtarget", "_blank");
    expect(send()).toBe(true);
  });
});

describe("drag and drop", () => {
  const drag = (type: string) => new Event(type, { bubbles: true, cancelable: true });

  it("cancels dragover and drop: nothing dropped is opened", () => {
    for (const type of ["dragenter", "dragover", "drop"]) expect(prevented(document.body, drag(type)), type).toBe(true);
  });

  it("cancels dragging a link or an image, not other drags", () => {
    const img = document.createElement("img");
    document.body.append(img);
    expect(prevented(img, drag("dragstart"))).toBe(true);
    expect(prevented(anchor("#menu").appendChild(document.createElement("b")), drag("dragstart"))).toBe(true);
    const div = document.createElement("div");
    document.body.append(div);
    expect(prevented(div, drag("dragstart"))).toBe(false);
  });
});

describe("context menu", () => {
  it("is cancelled everywhere, fields included", () => {
    const input = document.createElement("input");
    document.body.append(input);
    expect(prevented(document.body, click({ button: 2 }, "contextmenu"))).toBe(true);
    expect(prevented(input, click({ button: 2 }, "contextmenu"))).toBe(true);
  });
});

describe("keys", () => {
  it("cancels history keys: Alt+arrows, Browser keys, Cmd+[ ]", () => {
    for (const ev of [
      key("ArrowLeft", { altKey: true }),
      key("ArrowRight", { altKey: true }),
      key("Home", { altKey: true }),
      key("BrowserBack"),
      key("BrowserForward"),
      key("[", { metaKey: true }),
      key("]", { metaKey: true }),
    ])
      expect(prevented(document.body, ev), `${ev.key} alt=${ev.altKey}`).toBe(true);
  });

  it("cancels Backspace outside fields only", () => {
    expect(prevented(document.body, key("Backspace"))).toBe(true);
    const button = document.createElement("button");
    document.body.append(button);
    expect(prevented(button, key("Backspace"))).toBe(true);
    for (const tag of ["input", "textarea"]) {
      const field = document.createElement(tag);
      document.body.append(field);
      expect(prevented(field, key("Backspace")), tag).toBe(false);
    }
    const editable = document.createElement("div");
    editable.setAttribute("contenteditable", "true");
    document.body.append(editable);
    expect(prevented(editable, key("Backspace"))).toBe(false);
  });

  it("cancels zoom: Ctrl or Cmd with + - = 0, by character or physical key", () => {
    for (const [k, code] of [
      ["+", "Equal"],
      ["=", "Equal"],
      ["-", "Minus"],
      ["_", "Minus"],
      ["0", "Digit0"],
      ["+", "NumpadAdd"],
      ["à", "Digit0"], // AZERTY
    ]) {
      expect(prevented(document.body, key(k, { code, ctrlKey: true })), `Ctrl+${k}`).toBe(true);
      expect(prevented(document.body, key(k, { code, metaKey: true })), `Cmd+${k}`).toBe(true);
    }
  });

  it("cancels reload, print, save, open, source and the devtools", () => {
    for (const ev of [
      key("F5"),
      key("F12"),
      key("F11"),
      key("r", { ctrlKey: true }),
      key("R", { ctrlKey: true, shiftKey: true }),
      key("p", { ctrlKey: true }),
      key("s", { ctrlKey: true }),
      key("o", { metaKey: true }),
      key("u", { ctrlKey: true }),
      key("I", { ctrlKey: true, shiftKey: true }),
      key("J", { ctrlKey: true, shiftKey: true }),
      key("C", { ctrlKey: true, shiftKey: true }),
      key("i", { metaKey: true, altKey: true }),
      key("к", { code: "KeyR", ctrlKey: true }), // Russian layout
    ])
      expect(prevented(document.body, ev), `${ev.key} ctrl=${ev.ctrlKey} meta=${ev.metaKey}`).toBe(true);
  });

  it("cancels every other browser shortcut of Ctrl or Cmd and a letter, in fields too", () => {
    const input = document.createElement("input");
    document.body.append(input);
    // Downloads, history, bookmarks, address bar, find, new window or tab,
    // close, search: each is a way off the app in a browser.
    for (const l of ["j", "h", "d", "l", "f", "g", "k", "e", "n", "t", "w", "b"]) {
      expect(prevented(document.body, key(l, { ctrlKey: true })), `Ctrl+${l}`).toBe(true);
      expect(prevented(input, key(l, { ctrlKey: true })), `Ctrl+${l} in a field`).toBe(true);
    }
    expect(prevented(document.body, key("Delete", { ctrlKey: true, shiftKey: true }))).toBe(true);
    // Outside a field, copy and select all have nothing to do either.
    expect(prevented(document.body, key("a", { ctrlKey: true }))).toBe(true);
  });

  it("leaves Ctrl+Alt+S (the staff PIN pad) and AltGr characters alone", () => {
    expect(blockedKey(key("s", { code: "KeyS", ctrlKey: true, altKey: true }))).toBe(false);
    expect(blockedKey(key("S", { code: "KeyS", ctrlKey: true, altKey: true, shiftKey: true }))).toBe(false);
    // AZERTY AltGr+à is @, AltGr+= is }.
    expect(blockedKey(key("@", { code: "Digit0", ctrlKey: true, altKey: true }))).toBe(false);
    expect(blockedKey(key("}", { code: "Equal", ctrlKey: true, altKey: true }))).toBe(false);
  });

  it("leaves typing and editing in fields alone", () => {
    const input = document.createElement("input");
    document.body.append(input);
    for (const ev of [
      key("a"),
      key("0"),
      key("-"),
      key("+"),
      key("Backspace"),
      key("Delete"),
      key("ArrowLeft"),
      key("ArrowLeft", { shiftKey: true }),
      key("Enter"),
      key("c", { ctrlKey: true }),
      key("v", { ctrlKey: true }),
      key("x", { ctrlKey: true }),
      key("z", { ctrlKey: true }),
      key("a", { ctrlKey: true }),
      key("c", { metaKey: true }),
    ])
      expect(prevented(input, ev), `${ev.key} ctrl=${ev.ctrlKey} meta=${ev.metaKey}`).toBe(false);
  });

  it("leaves the customer screens' keys alone: digits, Enter, Escape, arrows, Tab", () => {
    for (const k of ["1", "Enter", "Escape", "ArrowLeft", "ArrowDown", "Tab", " "]) expect(prevented(document.body, key(k)), k).toBe(false);
  });

  it("cancels the key before the app's own handlers, which still see it", () => {
    const seen: [string, boolean][] = [];
    const h = (e: KeyboardEvent) => seen.push([e.key, e.defaultPrevented]);
    window.addEventListener("keydown", h);
    document.body.dispatchEvent(key("Backspace"));
    document.body.dispatchEvent(key("s", { ctrlKey: true, altKey: true }));
    window.removeEventListener("keydown", h);
    expect(seen).toEqual([
      ["Backspace", true],
      ["s", false],
    ]);
  });
});

describe("mouse", () => {
  it("cancels the back and forward buttons", () => {
    for (const type of ["mousedown", "mouseup", "auxclick"])
      for (const button of [3, 4]) expect(prevented(document.body, click({ button }, type)), `${type} ${button}`).toBe(true);
  });

  it("leaves the other buttons alone", () => {
    for (const type of ["mousedown", "mouseup"])
      for (const button of [0, 1, 2]) expect(prevented(document.body, click({ button }, type)), `${type} ${button}`).toBe(false);
  });

  it("keeps the hot corner's pointerdown", () => {
    expect(prevented(document.body, new Event("pointerdown", { bubbles: true, cancelable: true }))).toBe(false);
  });
});

describe("zoom", () => {
  it("cancels Ctrl+wheel, not plain scrolling", () => {
    expect(prevented(document.body, new WheelEvent("wheel", { bubbles: true, cancelable: true, deltaY: -100, ctrlKey: true }))).toBe(true);
    expect(prevented(document.body, new WheelEvent("wheel", { bubbles: true, cancelable: true, deltaY: -100 }))).toBe(false);
  });

  it("cancels WebKit's gesture events", () => {
    for (const type of ["gesturestart", "gesturechange", "gestureend"])
      expect(prevented(document.body, new Event(type, { bubbles: true, cancelable: true })), type).toBe(true);
  });
});

describe("window.open", () => {
  it("opens nothing and returns null, until uninstalled", () => {
    expect(window.open("https://example.com/", "_blank")).toBeNull();
    const open = window.open;
    uninstall();
    expect(window.open).not.toBe(open);
    uninstall = installLockdown(window);
  });
});

describe("history", () => {
  it("pushes an entry of its own, and again when Back reaches below it", () => {
    const before = history.length;
    const again = installLockdown(window);
    expect(history.length).toBe(before + 1);
    expect(history.state).toEqual({ comptoirLockdown: true });
    expect(location.href).toBe(`${here}/`);
    window.dispatchEvent(new PopStateEvent("popstate", { state: null }));
    // Both installs answer: this one and the one of beforeEach.
    expect(history.length).toBe(before + 3);
    again();
    window.dispatchEvent(new PopStateEvent("popstate", { state: null }));
    expect(history.length).toBe(before + 4);
  });

  it("stops listening once uninstalled", () => {
    uninstall();
    const before = history.length;
    window.dispatchEvent(new PopStateEvent("popstate", { state: null }));
    expect(history.length).toBe(before);
    uninstall = installLockdown(window);
  });

  it("undoes every listener", () => {
    uninstall();
    expect(prevented(document.body, click({ button: 2 }, "contextmenu"))).toBe(false);
    expect(prevented(document.body, key("F5"))).toBe(false);
    expect(prevented(anchor("https://example.com/"), click())).toBe(false);
    uninstall = installLockdown(window);
  });
});
