import { describe, expect, it } from "vitest";
import { catalogues, languages, money, percent, pick, translate } from ".";
import { en } from "./en";

const keys = Object.keys(en).sort();
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe("message catalogues", () => {
  it.each(languages)("%s has every key and no other", (lang) => {
    expect(Object.keys(catalogues[lang]).sort()).toEqual(keys);
  });

  it.each(languages)("%s has no empty message", (lang) => {
    for (const [key, value] of Object.entries(catalogues[lang])) {
      expect(value.trim(), `${lang} ${key}`).not.toBe("");
    }
  });

  it.each(languages)("%s uses the same placeholders as English", (lang) => {
    for (const key of keys) {
      const k = key as keyof typeof en;
      expect(placeholders(catalogues[lang][k]), `${lang} ${key}`).toEqual(placeholders(en[k]));
    }
  });

  it("has a message for every error key the backend sends", () => {
    for (const key of ["error.cart_empty", "error.unknown_product", "error.wrong_phase", "error.terminal_unavailable", "error.amount"]) {
      expect(keys).toContain(key);
    }
  });

  it("never calls an unknown outcome declined or cancelled", () => {
    for (const lang of languages) {
      const c = catalogues[lang];
      const text = [c["unknown.title"], c["unknown.call_staff"], c["unknown.dont_pay_again"]].join(" ").toLowerCase();
      expect(text).not.toMatch(/declin|refus|rechaz|cancel|annul/);
    }
  });
});

describe("translate", () => {
  it("fills placeholders", () => {
    expect(translate("en", "idle.body", { seconds: 9 })).toBe("Your order will be cancelled in 9 seconds.");
    expect(translate("fr", "menu.cart_count", { count: 3 })).toBe("3 articles");
  });
});

describe("money and names", () => {
  const NBSP = "\u00a0";
  it("formats per locale in the merchant currency", () => {
    expect(money(1250, "EUR", "fr")).toBe(`12,50${NBSP}€`);
    expect(money(1250, "EUR", "es")).toBe(`12,50${NBSP}€`);
    expect(money(1250, "GBP", "en")).toBe("£12.50");
    expect(money(990, "CHF", "en")).toBe(`CHF${NBSP}9.90`);
  });

  it("formats VAT rates from basis points", () => {
    expect(percent(550, "en")).toBe("5.5%");
    expect(percent(2000, "fr")).toBe(`20${NBSP}%`);
  });

  it("picks a name in the language, else the fallback", () => {
    expect(pick({ fr: "Café", en: "Espresso" }, "en")).toBe("Espresso");
    expect(pick({ fr: "Café" }, "es", "fr")).toBe("Café");
    expect(pick(undefined, "fr")).toBe("");
  });
});
