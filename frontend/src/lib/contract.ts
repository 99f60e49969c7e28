// The contract with the backend: a mirror of backend/kiosk/contract.go,
// field for field. Change both together.

export type Phase =
  | "welcome"
  | "ordering"
  | "paying"
  | "canceling"
  | "approved"
  | "declined"
  | "unknown"
  | "failed"
  | "unavailable";

export type PaymentMethod = "card" | "voucher_then_card";
export type Step = "card" | "voucher";
export type ReceiptChoice = "print" | "email" | "sms" | "none";
export type Language = "fr" | "en" | "es";

/** A name in every offered language. */
export type Text = Partial<Record<Language, string>>;

export interface ProductView {
  id: string;
  name: Text;
  description?: Text;
  /** Cents, VAT included. */
  price: number;
  /** Basis points: 550 = 5.5 %. */
  vatRate: number;
  mealVoucher: boolean;
  image?: string;
  allergens?: string[];
}

export interface CategoryView {
  id: string;
  name: Text;
  products: ProductView[];
}

export interface CatalogView {
  currency: string;
  categories: CategoryView[];
}

export interface LineView {
  id: string;
  productId: string;
  name: Text;
  qty: number;
  unitPrice: number;
  total: number;
  vatRate: number;
}

export interface TaxView {
  rate: number;
  amount: number;
}

export interface PaymentView {
  method: PaymentMethod;
  step: Step;
  amount: number;
  paid: number;
  due: number;
  attemptUuid?: string;
  /** ISO time when the terminal stops waiting for a card. */
  deadline?: string;
  chargedDespiteCancel?: boolean;
  message?: string;
}

export interface ReceiptView {
  choice?: ReceiptChoice;
  status?: "" | "working" | "done" | "error";
  message?: string;
}

export interface CheckoutView {
  phase: Phase;
  language: Language;
  currency: string;
  orderNumber?: string;
  orderId?: string;
  lines: LineView[];
  total: number;
  taxes: TaxView[];
  voucherEligible: number;
  payment?: PaymentView;
  receipt?: ReceiptView;
  /** A message key (e.g. "error.cart_empty"), "" or absent when none. */
  error?: string;
}

export type TerminalState = "searching" | "connected" | "unreachable" | "choose" | "none";

export interface TerminalView {
  state: TerminalState;
  name?: string;
  address?: string;
  since?: string;
  demo: boolean;
  ready: boolean;
  problem?: string;
}

export interface InfoView {
  version: string;
  demo: boolean;
  languages: Language[];
  defaultLanguage: Language;
  currency: string;
  idleSeconds: number;
  mode: "kiosk" | "counter";
}

export const EventCheckout = "kiosk:checkout";
export const EventTerminal = "kiosk:terminal";

/** The intents, by name, with their arguments. */
export interface Intents {
  Info(): Promise<InfoView>;
  Catalog(): Promise<CatalogView>;
  Checkout(): Promise<CheckoutView>;
  Terminal(): Promise<TerminalView>;
  Start(language: Language): Promise<CheckoutView>;
  SetLanguage(language: Language): Promise<CheckoutView>;
  AddItem(productId: string, qty: number): Promise<CheckoutView>;
  SetQuantity(lineId: string, qty: number): Promise<CheckoutView>;
  Pay(method: PaymentMethod): Promise<CheckoutView>;
  Cancel(): Promise<CheckoutView>;
  Retry(): Promise<CheckoutView>;
  PayRestByCard(): Promise<CheckoutView>;
  CancelOrder(): Promise<CheckoutView>;
  ChooseReceipt(choice: ReceiptChoice): Promise<CheckoutView>;
  Finish(): Promise<CheckoutView>;
  Abandon(): Promise<CheckoutView>;
}
