import type { Language, Text } from "../contract";
import { formatCents } from "../format";
import { en, type MessageKey, type Messages } from "./en";
import { es } from "./es";
import { fr } from "./fr";

export type { MessageKey, Messages };

export const catalogues: Record<Language, Messages> = { fr, en, es };

/** The locale each language formats numbers and money in. */
export const locales: Record<Language, string> = { fr: "fr-FR", en: "en-GB", es: "es-ES" };

export const languages: Language[] = ["fr", "en", "es"];

export function isLanguage(s: unknown): s is Language {
  return s === "fr" || s === "en" || s === "es";
}

export function isMessageKey(s: unknown): s is MessageKey {
  return typeof s === "string" && Object.hasOwn(en, s);
}

export type Params = Record<string, string | number>;

/** translate looks a key up in a language, filling {placeholders}. */
export function translate(lang: Language, key: MessageKey, params?: Params): string {
  return fill(catalogues[lang]?.[key] ?? en[key], params);
}

/** fill puts params in a message's {placeholders}; one it has no value for stays as it is. */
export function fill(msg: string, params?: Params): string {
  if (!params) return msg;
  return msg.replace(/\{(\w+)\}/g, (m, name: string) => (name in params ? String(params[name]) : m));
}

/**
 * The 14 allergens EU law makes a menu name (Regulation (EU) 1169/2011,
 * Annex II), as the catalog spells them; each has its words in every
 * language (allergen.<key>). The backend refuses any other.
 */
export const allergens = [
  "gluten",
  "crustaceans",
  "eggs",
  "fish",
  "peanuts",
  "soybeans",
  "milk",
  "nuts",
  "celery",
  "mustard",
  "sesame",
  "sulphites",
  "lupin",
  "molluscs",
] as const;

/**
 * allergenList says a product's allergens in the language ("gluten, lait et
 * œufs"). A key the UI has no words for is shown as it is: an allergen is
 * never left out.
 */
export function allergenList(keys: readonly string[], lang: Language): string {
  const names = keys.map((a) => {
    const key = `allergen.${a}`;
    return isMessageKey(key) ? translate(lang, key) : a;
  });
  return new Intl.ListFormat(locales[lang], { type: "conjunction" }).format(names);
}

/** pick chooses a backend Text in the language, then the fallback, then any. */
export function pick(text: Text | undefined, lang: Language, fallback?: Language): string {
  if (!text) return "";
  return text[lang] || (fallback && text[fallback]) || text.en || text.fr || text.es || "";
}

/** money formats cents in the merchant currency, in the language's locale. */
export function money(cents: number, currency: string, lang: Language): string {
  try {
    return formatCents(cents, currency, locales[lang]);
  } catch {
    // An unknown currency must not blank the screen; show the raw amount honestly.
    return `${(cents / 100).toFixed(2)} ${currency}`;
  }
}

/** percent formats a rate in basis points (550 → "5.5 %" / "5,5 %"). */
export function percent(basisPoints: number, lang: Language): string {
  return new Intl.NumberFormat(locales[lang], { style: "percent", maximumFractionDigits: 2 }).format(
    basisPoints / 10000,
  );
}
