// The kiosk's UI contract. Its types and the intents' signatures
// (Intents) are generated from the Go types of backend/kiosk/contract.go
// and the table of backend/kiosk/intents.go into contract.gen.ts (`make
// contract`; CI fails when that file is not current). This file adds what
// Go's types cannot say: the languages the UI has words for.

import type { InfoView } from "./contract.gen";

export * from "./contract.gen";

/** The languages the UI has translations for (Go sends them as strings). */
export type Language = "fr" | "en" | "es";

/** InfoView once the UI has kept only the languages it can show (normalizeInfo). */
export interface Info extends Omit<InfoView, "languages" | "defaultLanguage"> {
  languages: Language[];
  defaultLanguage: Language;
}
