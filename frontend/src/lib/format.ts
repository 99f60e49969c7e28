// Minor units per ISO 4217 for the currencies the terminals settle in. A
// currency missing here is an error rather than a guess: showing 1250 cents
// of an unknown currency as "12.50" could be off by a factor of 100.
const minorUnits: Record<string, number> = {
  EUR: 2,
  CHF: 2,
  GBP: 2,
};

/** formatCents renders an integer amount of minor units (cents) for display. */
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
    minimumFractionDigits: digits,
    maximumFractionDigits: digits,
  }).format(cents / 10 ** digits);
}
