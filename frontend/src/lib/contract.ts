// The kiosk's UI contract. Its types are generated from the Go types of
// backend/kiosk/contract.go into contract.gen.ts (`make contract`; CI fails
// when that file is not current). This file adds what Go's types cannot say:
// the languages the UI has words for, and the intents' signatures.

import type { CatalogView, CheckoutView, Dining, InfoView, PaymentMethod, ReceiptChoice, TerminalView } from "./contract.gen";

export * from "./contract.gen";

/** The languages the UI has translations for (Go sends them as strings). */
export type Language = "fr" | "en" | "es";

/** InfoView once the UI has kept only the languages it can show (normalizeInfo). */
export interface Info extends Omit<InfoView, "languages" | "defaultLanguage"> {
  languages: Language[];
  defaultLanguage: Language;
}

/** The intents, by name, with their arguments. */
export interface Intents {
  Info(): Promise<InfoView>;
  Catalog(): Promise<CatalogView>;
  Checkout(): Promise<CheckoutView>;
  Terminal(): Promise<TerminalView>;
  Start(language: Language): Promise<CheckoutView>;
  ChooseDining(dining: Dining): Promise<CheckoutView>;
  SetLanguage(language: Language): Promise<CheckoutView>;
  AddItem(productId: string, qty: number): Promise<CheckoutView>;
  /** choices: "group/choice" ids, for a product with options. */
  AddWithChoices(productId: string, qty: number, choices: string[]): Promise<CheckoutView>;
  SetChoices(lineId: string, choices: string[]): Promise<CheckoutView>;
  SetQuantity(lineId: string, qty: number): Promise<CheckoutView>;
  Pay(method: PaymentMethod): Promise<CheckoutView>;
  Cancel(): Promise<CheckoutView>;
  Retry(): Promise<CheckoutView>;
  PayRestByCard(): Promise<CheckoutView>;
  /** Paying by phone: the link's QR code on the terminal's printer. */
  PrintLink(): Promise<CheckoutView>;
  CancelOrder(): Promise<CheckoutView>;
  ChooseReceipt(choice: ReceiptChoice): Promise<CheckoutView>;
  Finish(): Promise<CheckoutView>;
  Abandon(): Promise<CheckoutView>;
}
