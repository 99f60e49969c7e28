// Staff mode's words in the three languages, beside the customer's (../).
// Staff screens look a key up here first, then among the customer's words
// (a language's name, an allergen).

import type { Language } from "../../contract";
import { fill, isMessageKey, translate, type MessageKey, type Params } from "..";
import { staffEn, type StaffMessageKey, type StaffMessages } from "./en";
import { staffEs } from "./es";
import { staffFr } from "./fr";

export type { StaffMessageKey, StaffMessages };

/** Any key a staff screen may say: its own, or one of the customer's. */
export type AnyMessageKey = StaffMessageKey | MessageKey;

export const staffCatalogues: Record<Language, StaffMessages> = { fr: staffFr, en: staffEn, es: staffEs };

export function isStaffMessageKey(s: unknown): s is StaffMessageKey {
  return typeof s === "string" && Object.hasOwn(staffEn, s);
}

/** staffTranslate is translate for the staff screens: their words, then the customer's. */
export function staffTranslate(lang: Language, key: AnyMessageKey, params?: Params): string {
  if (!isStaffMessageKey(key)) return translate(lang, key, params);
  return fill(staffCatalogues[lang]?.[key] ?? staffEn[key], params);
}

export function isAnyMessageKey(s: unknown): s is AnyMessageKey {
  return isStaffMessageKey(s) || isMessageKey(s);
}
