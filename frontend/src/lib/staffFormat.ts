// Small formatting helpers of the staff screens.

import type { Language } from "./contract";
import { locales } from "./i18n";

const pad = (n: number) => String(n).padStart(2, "0");

/** localDay is yyyy-mm-dd in the kiosk's own time zone (the journal's days). */
export function localDay(d: Date = new Date()): string {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** utcDay is yyyy-mm-dd in UTC (the terminal's history counts days in UTC). */
export function utcDay(d: Date = new Date()): string {
  return d.toISOString().slice(0, 10);
}

/** dateTime formats an RFC 3339 time for staff; "" for none (Go's zero time included). */
export function dateTime(iso: string | undefined | null, lang: Language): string {
  if (!iso || iso.startsWith("0001-01-01")) return "";
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return iso;
  return new Intl.DateTimeFormat(locales[lang], { dateStyle: "short", timeStyle: "medium" }).format(t);
}

/** settingTestId turns a settings key into its test id part: dots become dashes. */
export function settingTestId(key: string): string {
  return key.replaceAll(".", "-");
}

/** download offers text as a file (browser: a Blob and a download link). */
export function download(filename: string, text: string, type = "text/csv;charset=utf-8"): boolean {
  if (typeof URL.createObjectURL !== "function") return false;
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = filename;
  a.rel = "noopener";
  a.style.display = "none";
  document.body.append(a);
  a.click();
  a.remove();
  // The click has started the download; the URL can go once it is read.
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
  return true;
}
