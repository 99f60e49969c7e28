import { describe, expect, it } from "vitest";
import { formatCents, parseAmount, sized } from "./format";

// Intl separates groups and symbols with no-break spaces; spell them out so a
// failing test shows which one changed.
const NBSP = "\u00a0";
const NNBSP = "\u202f";

describe("formatCents", () => {
  it.each([
    { cents: 1250, currency: "EUR", locale: "fr-FR", want: `12,50${NBSP}€` },
    { cents: 123456789, currency: "EUR", locale: "fr-FR", want: `1${NNBSP}234${NNBSP}567,89${NBSP}€` },
    { cents: 5, currency: "EUR", locale: "en-IE", want: "€0.05" },
    { cents: 0, currency: "EUR", locale: "es-ES", want: `0,00${NBSP}€` },
    { cents: -480, currency: "EUR", locale: "fr-FR", want: `-4,80${NBSP}€` },
    { cents: 1250, currency: "GBP", locale: "en-GB", want: "£12.50" },
    { cents: 100000, currency: "GBP", locale: "en-GB", want: "£1,000.00" },
    { cents: 990, currency: "CHF", locale: "de-CH", want: `CHF${NBSP}9.90` },
  ])("$cents $currency in $locale is $want", ({ cents, currency, locale, want }) => {
    expect(formatCents(cents, currency, locale)).toBe(want);
  });

  // The kiosk's three currencies in its three languages, as the receipt
  // prints them (backend/receipt's Formatter): the symbol after the amount
  // in French and Spanish, before it in English; "£" in every language.
  it.each([
    { currency: "EUR", locale: "fr", want: `12,50${NBSP}€` },
    { currency: "EUR", locale: "en", want: "€12.50" },
    { currency: "EUR", locale: "es", want: `12,50${NBSP}€` },
    { currency: "CHF", locale: "fr", want: `12,50${NBSP}CHF` },
    { currency: "CHF", locale: "en", want: `CHF${NBSP}12.50` },
    { currency: "CHF", locale: "es", want: `12,50${NBSP}CHF` },
    { currency: "GBP", locale: "fr", want: `12,50${NBSP}£` },
    { currency: "GBP", locale: "en", want: "£12.50" },
    { currency: "GBP", locale: "es", want: `12,50${NBSP}£` },
  ])("1250 $currency in $locale is $want", ({ currency, locale, want }) => {
    expect(formatCents(1250, currency, locale)).toBe(want);
  });

  it("does not round whole cents away", () => {
    expect(formatCents(1999, "EUR", "en-IE")).toBe("€19.99");
    expect(formatCents(1, "GBP", "en-GB")).toBe("£0.01");
  });

  it("rejects fractions of a cent", () => {
    expect(() => formatCents(12.5, "EUR", "fr-FR")).toThrow(RangeError);
    expect(() => formatCents(Number.NaN, "EUR", "fr-FR")).toThrow(RangeError);
  });

  it("rejects currencies whose minor units it does not know", () => {
    expect(() => formatCents(1000, "JPY", "ja-JP")).toThrow(/unsupported currency JPY/);
  });
});

describe("parseAmount", () => {
  it.each([
    ["4.50", 450],
    ["4,50", 450],
    ["4,5", 450],
    ["4.", 400],
    ["4", 400],
    [" 12.30 ", 1230],
    ["0.05", 5],
    ["0", 0],
    ["1000", 100000],
  ])("reads %j as %i cents", (text, cents) => {
    expect(parseAmount(text, "EUR")).toBe(cents);
  });

  it.each(["", " ", "4.555", "-4.50", "+4", "4.50€", "€4.50", "1 000", "1,000.00", "abc", ".5", "4..5", "1e3", "99999999999999999"])(
    "refuses %j",
    (text) => {
      expect(parseAmount(text, "EUR")).toBeNull();
    },
  );

  it("refuses an unknown currency rather than guess its decimals", () => {
    expect(parseAmount("4.50", "XYZ")).toBeNull();
  });
});

describe("sized", () => {
  it("asks for a picture at a width, keeping a query it has", () => {
    expect(sized("/media/images/p%20one.jpg", 640)).toBe("/media/images/p%20one.jpg?w=640");
    expect(sized("/media/x.png?v=2", 160)).toBe("/media/x.png?v=2&w=160");
  });
});
