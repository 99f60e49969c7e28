// Minor units per ISO 4217 for the currencies the terminals settle in. A
// currency missing here is an error rather than a guess: showing 1250 cents
// of an unknown currency as "12.50" could be off by a factor of 100.
const minorUnits: Record<string, number> = {
  EUR: 2,
  CHF: 2,
  GBP: 2,
};

/**
 * formatCents renders an integer amount of minor units (cents) for display,
 * with the currency's narrow symbol, as the printed receipt writes it: "£"
 * in every language (plain "symbol" is "£GB" in French and "GBP" in
 * Spanish), "€", and "CHF", which has no other.
 */
export function formatCents(cents: number, currency: string, locale: string): string {
  if (!Number.isSafeInteger(cents)) {
    throw new RangeError(`amount must be a whole number of cents, got ${cents}`);
  }
  const digits = minorUnits[currency];
  if (digits === undefined) {
    throw new RangeError(`unsupported currency ${currency}`);
  }
  return new Intl.NumberFormat(locale, {
    style: "currency",
    currency,
    currencyDisplay: "narrowSymbol",
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(cents / 10 ** digits);
}

/**
 * parseAmount reads an amount typed in the currency's units ("4.50", "4,5",
 * "12") as a whole number of minor units (450, 450, 1200). It returns null
 * for anything else: a sign, more decimals than the currency has, grouping,
 * letters, an unknown currency. Zero is returned as 0: the caller decides
 * whether zero is allowed.
 */
export function parseAmount(text: string, currency: string): number | null {
  const digits = minorUnits[currency];
  if (digits === undefined) return null;
  const m = /^(\d+)(?:[.,](\d*))?$/.exec(text.trim());
  if (!m) return null;
  const [, units, fraction = ""] = m;
  if (fraction.length > digits) return null;
  const cents = Number(units) * 10 ** digits + Number(fraction.padEnd(digits, "0") || "0");
  return Number.isSafeInteger(cents) ? cents : null;
}

/** sized is a catalog picture's URL asking for it at most w pixels wide. */
export function sized(url: string, w: number): string {
  return `${url}${url.includes("?") ? "&" : "?"}w=${w}`;
}
