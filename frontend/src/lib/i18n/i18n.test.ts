import { describe, expect, it } from "vitest";
import { allergenList, allergens, catalogues, isMessageKey, languages, money, percent, pick, translate } from ".";
import type { Language } from "../contract";
import { en } from "./en";
import { isStaffMessageKey, staffCatalogues, staffTranslate } from "./staff";
import { staffEn } from "./staff/en";

const keys = Object.keys(en).sort();
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

// The customer's words and staff mode's, each held to the same rules.
const sets: [string, Record<string, string>, Record<Language, Record<string, string>>][] = [
  ["customer", en, catalogues],
  ["staff", staffEn, staffCatalogues],
];

describe.each(sets)("%s message catalogues", (_, reference, all) => {
  const refKeys = Object.keys(reference).sort();

  it.each(languages)("%s has every key and no other", (lang) => {
    expect(Object.keys(all[lang]).sort()).toEqual(refKeys);
  });

  it.each(languages)("%s has no empty message", (lang) => {
    for (const [key, value] of Object.entries(all[lang])) {
      expect(value.trim(), `${lang} ${key}`).not.toBe("");
    }
  });

  it.each(languages)("%s uses the same placeholders as English", (lang) => {
    for (const key of refKeys) {
      expect(placeholders(all[lang][key]), `${lang} ${key}`).toEqual(placeholders(reference[key]));
    }
  });
});

describe("message catalogues", () => {
  it("keeps staff mode's words out of the customer's (they load with staff mode)", () => {
    expect(keys.filter((k) => k.startsWith("staff."))).toEqual([]);
    expect(Object.keys(staffEn).filter((k) => !k.startsWith("staff."))).toEqual([]);
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

describe("allergens", () => {
  it("has words for the 14 the law names, in every language", () => {
    expect(allergens).toHaveLength(14);
    for (const a of allergens) {
      const key = `allergen.${a}`;
      expect(isMessageKey(key), key).toBe(true);
    }
    // Words the catalog's English key is not (the keys are English).
    expect(allergenList(["milk", "eggs", "sulphites"], "fr")).toBe("lait, œufs et sulfites");
    expect(allergenList(["milk", "eggs", "sulphites"], "es")).toBe("leche, huevos y sulfitos");
  });

  it("never leaves an allergen out, even one the UI has no words for", () => {
    expect(allergenList(["gluten", "celeriac"], "en")).toBe("gluten and celeriac");
  });
});

// One idea, one term, in each language: a customer who reads "vale de
// comida" on one screen and "cheque restaurante" on the next wonders
// whether they are the same. Each idea: what says it in English, the term
// each language uses, and the synonyms it must not use.
const glossary = [
  {
    idea: "meal voucher",
    en: /meal voucher/i,
    fr: { term: /titre-restaurant/i, not: /ticket[- ]restaurant|chèque[- ]restaurant|chèque[- ]déjeuner/i },
    es: { term: /vale de comida/i, not: /cheque[- ]restaurante|ticket[- ]restaurante|vale de restaurante/i },
  },
  {
    idea: "receipt",
    en: /\breceipt/i,
    fr: { term: /\bticket/i, not: /\breçu|justificatif|facturette/i },
    es: { term: /\brecibo/i, not: /comprobante|\bfactura/i },
  },
  {
    idea: "staff",
    en: /\bstaff\b/i,
    fr: { term: /\bpersonnel\b/i, not: /employé|équipe|serveur/i },
    es: { term: /\bpersonal\b/i, not: /empleado|camarero/i },
  },
  {
    idea: "payment terminal",
    en: /payment terminal/i,
    fr: { term: /terminal de paiement/i, not: /\bTPE\b|lecteur de carte/i },
    es: { term: /terminal de pago/i, not: /datáfono|\bTPV\b|lector de tarjetas/i },
  },
] as const;

describe("one term per idea", () => {
  // The customer's words: the staff screens have their own.
  for (const g of glossary) {
    it.each(["fr", "es"] as const)(`${g.idea}: one term in %s`, (lang) => {
      for (const key of keys) {
        const k = key as keyof typeof en;
        const msg = catalogues[lang][k];
        expect(msg, `${lang} ${key}`).not.toMatch(g[lang].not);
        if (g.en.test(en[k])) expect(msg, `${lang} ${key}: "${en[k]}"`).toMatch(g[lang].term);
      }
    });
  }
});

describe("translate", () => {
  it("fills placeholders", () => {
    expect(translate("en", "idle.body", { seconds: 9 })).toBe("Your order will be cancelled in 9 seconds.");
    expect(translate("fr", "menu.cart_count", { count: 3 })).toBe("3 articles");
  });

  it("says staff mode's words, and the customer's, on the staff screens", () => {
    expect(staffTranslate("fr", "staff.who", { who: "caisse" })).toBe("Connecté : caisse");
    expect(staffTranslate("es", "lang.name")).toBe("Español");
    expect(isStaffMessageKey("staff.title")).toBe(true);
    expect(isStaffMessageKey("lang.name")).toBe(false);
    expect(isMessageKey("staff.title")).toBe(false);
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
