import { cleanup, fireEvent, render, screen, within } from "@testing-library/svelte";
import { flushSync } from "svelte";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { kioskWith } from "../test/fakes";
import Approved from "./Approved.svelte";
import Cart from "./Cart.svelte";
import Declined from "./Declined.svelte";
import ProductDetail from "./ProductDetail.svelte";
import Dining from "./Dining.svelte";
import Failed from "./Failed.svelte";
import Menu from "./Menu.svelte";
import PaymentChoice from "./PaymentChoice.svelte";
import Paying from "./Paying.svelte";
import Unknown from "./Unknown.svelte";
import Canceling from "./Canceling.svelte";
import Unavailable from "./Unavailable.svelte";
import Welcome from "./Welcome.svelte";
import TopBar from "../components/TopBar.svelte";

const card = { method: "card" as const, step: "card" as const, amount: 1500, paid: 0, due: 1500, attemptUuid: "0192-uuid" };

describe("Paying", () => {
  beforeEach(() => vi.useFakeTimers({ now: new Date("2025-01-10T12:00:00Z") }));
  afterEach(() => vi.useRealTimers());

  it("says when the terminal is reached through the provider's cloud", () => {
    const { context } = kioskWith({ phase: "paying", payment: { ...card, throughCloud: true } });
    render(Paying, { context });
    expect(screen.getByTestId("via-cloud").textContent).toBe("The terminal is reached through the provider's cloud.");
  });

  it("shows the amount and counts down to the deadline", async () => {
    const { context } = kioskWith({
      phase: "paying",
      payment: { ...card, deadline: "2025-01-10T12:00:45Z" },
    });
    render(Paying, { context });
    expect(screen.getByTestId("payment-amount").textContent).toBe("€15.00");
    expect(screen.getByText("Follow the instructions on the terminal")).toBeTruthy();
    const countdown = screen.getByRole("timer");
    expect(countdown.dataset.seconds).toBe("45");
    expect(countdown.textContent!.trim()).toBe("45s");
    await vi.advanceTimersByTimeAsync(10_000);
    expect(countdown.dataset.seconds).toBe("35");
    expect(countdown.getAttribute("aria-label")).toContain("35 seconds");
    await vi.advanceTimersByTimeAsync(60_000);
    expect(countdown.dataset.seconds).toBe("0");
  });

  it("calls Cancel once when Cancel is pressed", async () => {
    const { context, fake } = kioskWith({ phase: "paying", payment: { ...card, deadline: "2025-01-10T12:00:45Z" } });
    fake.answers.Cancel = () => ({ ...fake.state.view, phase: "canceling" });
    render(Paying, { context });
    const button = screen.getByRole("button", { name: "Cancel payment" });
    await fireEvent.click(button);
    expect(fake.intents()).toEqual(["Cancel"]);
    expect((button as HTMLButtonElement).disabled).toBe(true);
  });

  it("says which step of a split payment is out", () => {
    const { context } = kioskWith({ phase: "paying", payment: { ...card, method: "voucher_then_card", step: "card", amount: 500, paid: 1000, due: 500 } });
    render(Paying, { context });
    expect(screen.getByTestId("payment-step").textContent).toBe("Step 2 of 2: bank card");
    expect(screen.getByTestId("payment-paid").textContent).toBe("Already paid: €10.00");
    expect(screen.queryByRole("timer")).toBeNull();
  });
});

describe("Dining", () => {
  it("asks eat in or take away and sends the choice", async () => {
    const { context, fake } = kioskWith({ phase: "dining", diningAsked: true, lines: [] });
    fake.answers.ChooseDining = () => ({ ...fake.state.view, phase: "ordering", dining: "take_away" });
    render(Dining, { context });
    expect(screen.getByRole("heading", { name: "Eat in or take away?" })).toBeTruthy();
    await fireEvent.click(screen.getByRole("button", { name: "Take away" }));
    expect(fake.intents()).toEqual(["ChooseDining"]);
  });
});

describe("Welcome", () => {
  it("asks eat in or take away on the first screen when the shop asks: one touch starts the order there", async () => {
    const { context, fake } = kioskWith({ phase: "welcome", diningAsked: true, lines: [] });
    fake.answers.Start = () => ({ ...fake.state.view, phase: "dining" });
    fake.answers.ChooseDining = () => ({ ...fake.state.view, phase: "ordering", dining: "eat_in" });
    render(Welcome, { context });
    expect(screen.queryByTestId("start")).toBeNull();
    await fireEvent.click(screen.getByTestId("welcome-eat_in"));
    await vi.waitFor(() => expect(fake.intents()).toEqual(["Start", "ChooseDining"]));
  });

  it("has one button to start when the shop serves one way", async () => {
    const { context, fake } = kioskWith({ phase: "welcome", diningAsked: false, lines: [] });
    render(Welcome, { context });
    expect(screen.queryByTestId("welcome-eat_in")).toBeNull();
    await fireEvent.click(screen.getByTestId("start"));
    expect(fake.intents()).toEqual(["Start"]);
  });
});

describe("Cart says where the order is eaten", () => {
  it("offers the other choice while the shop asks, and not when it serves one way", async () => {
    const { context, fake } = kioskWith({ dining: "eat_in", diningAsked: true });
    render(Cart, { context, props: { onBack: () => {}, onPay: () => {} } });
    expect(screen.getByTestId("cart-dining").textContent).toContain("Eat in");
    await fireEvent.click(screen.getByTestId("cart-dining-change"));
    expect(fake.intents()).toEqual(["ChooseDining"]);
  });

  it("only says it when the shop serves one way", () => {
    const { context } = kioskWith({ dining: "take_away", diningAsked: false });
    render(Cart, { context, props: { onBack: () => {}, onPay: () => {} } });
    expect(screen.getByTestId("cart-dining").textContent).toContain("Take away");
    expect(screen.queryByTestId("cart-dining-change")).toBeNull();
  });
});

describe("Cart suggestions", () => {
  const withSuggestion = () => {
    const w = kioskWith({ lines: [{ id: "l1", productId: "croque", name: { en: "Croque-monsieur" }, qty: 1, unitPrice: 750, total: 750, vatRate: 1000 }] });
    w.k.catalog = {
      ...w.k.catalog,
      categories: w.k.catalog.categories.map((c) => ({
        ...c,
        products: c.products.map((p) => (p.id === "croque" ? { ...p, suggest: ["jus", "croque", "nope"] } : p)),
      })),
    };
    return w;
  };
  const props = { onBack: () => {}, onPay: () => {} };

  it("offers what the cart's products suggest, once, never what the cart holds", async () => {
    const { context, fake, k } = withSuggestion();
    const first = render(Cart, { context, props });
    expect(screen.getByTestId("suggestions")).toBeTruthy();
    expect(screen.queryByTestId("suggest-add-croque")).toBeNull(); // already in the cart
    expect(screen.queryByTestId("suggest-add-nope")).toBeNull(); // not in the catalog
    await fireEvent.click(screen.getByTestId("suggest-add-jus"));
    expect(fake.calls.at(-1)).toEqual({ name: "AddItem", args: ["jus", 1] });
    first.unmount();
    expect(k.suggested).toBe(true);
    render(Cart, { context, props });
    expect(screen.queryByTestId("suggestions")).toBeNull();
  });

  it("goes away when declined", async () => {
    const { context } = withSuggestion();
    render(Cart, { context, props });
    await fireEvent.click(screen.getByTestId("suggest-dismiss"));
    expect(screen.queryByTestId("suggestions")).toBeNull();
  });
});

describe("Product options", () => {
  const latte = {
    id: "latte",
    name: { en: "Latte" },
    price: 400,
    vatRate: 1000,
    mealVoucher: true,
    options: [
      { id: "size", name: { en: "Size" }, min: 1, max: 1, choices: [{ id: "m", name: { en: "Medium" }, price: 0 }, { id: "l", name: { en: "Large" }, price: 80 }] },
      { id: "syrup", name: { en: "Syrups" }, min: 0, max: 1, choices: [{ id: "vanilla", name: { en: "Vanilla" }, price: 50 }] },
    ],
  };

  it("proposes the first size, prices the choices and sends them", async () => {
    const { context, fake } = kioskWith({ lines: [] });
    render(ProductDetail, { context, props: { product: latte, onClose: () => {} } });
    expect((screen.getByTestId("choice-size-m") as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(screen.getByTestId("choice-size-l"));
    await fireEvent.click(screen.getByTestId("choice-syrup-vanilla"));
    expect(screen.getByTestId("add-to-cart").textContent).toContain("€5.30");
    await fireEvent.click(screen.getByTestId("add-to-cart"));
    expect(fake.calls.at(-1)).toEqual({ name: "AddWithChoices", args: ["latte", 1, ["size/l", "syrup/vanilla"]] });
  });

  it("reopens a cart line's choices and changes them", async () => {
    const line = {
      id: "latte~size/l",
      productId: "latte",
      name: { en: "Latte" },
      qty: 2,
      unitPrice: 480,
      total: 960,
      vatRate: 1000,
      choices: [{ group: "size", id: "l", name: { en: "Large" }, price: 80, vatRate: 1000 }],
    };
    const { context, fake } = kioskWith({ lines: [line] });
    render(ProductDetail, { context, props: { product: latte, line, onClose: () => {} } });
    expect((screen.getByTestId("choice-size-l") as HTMLInputElement).checked).toBe(true);
    expect(screen.queryByTestId("qty-plus")).toBeNull();
    await fireEvent.click(screen.getByTestId("choice-size-m"));
    await fireEvent.click(screen.getByTestId("add-to-cart"));
    expect(fake.calls.at(-1)).toEqual({ name: "SetChoices", args: ["latte~size/l", ["size/m"]] });
  });
});

describe("Canceling", () => {
  it("tells the customer not to present a card, and how long the terminal may still ask", () => {
    vi.useFakeTimers({ now: new Date("2025-01-10T12:00:00Z") });
    try {
      const { context } = kioskWith({ phase: "canceling", payment: { ...card, deadline: "2025-01-10T12:00:42Z" } });
      render(Canceling, { context });
      expect(screen.getByTestId("canceling-no-card").textContent).toMatch(/do not present/);
      expect(screen.getByTestId("canceling-countdown").textContent).toContain("42 s");
    } finally {
      vi.useRealTimers();
    }
  });

  it("is an honest wait with no buttons", () => {
    const { context } = kioskWith({ phase: "canceling", payment: card });
    render(Canceling, { context });
    expect(screen.getByRole("heading", { name: "Cancelling…" })).toBeTruthy();
    expect(screen.queryAllByRole("button")).toHaveLength(0);
    expect(screen.getByTestId("screen-canceling").textContent).not.toMatch(/cancelled|not been charged/i);
  });
});

describe("Unknown", () => {
  it.each(["fr", "en", "es"] as const)("never says declined or cancelled (%s), and shows the order number", (language) => {
    const { context } = kioskWith({ phase: "unknown", language, orderNumber: "57", payment: { ...card, message: "no answer" } });
    render(Unknown, { context });
    const text = screen.getByTestId("screen-unknown").textContent!.toLowerCase();
    expect(text).not.toMatch(/declin|refus|rechaz|cancel|annul|not been charged|pas été débité|no se le ha cobrado/);
    expect(screen.getByTestId("order-number").textContent).toBe("57");
  });

  it("asks to call staff", () => {
    const { context } = kioskWith({ phase: "unknown", payment: card });
    render(Unknown, { context });
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("We cannot confirm your payment");
    expect(screen.getByText(/call a member of staff/)).toBeTruthy();
  });

  it("gives the customer no way to close it: staff release it from the staff screens", () => {
    const { context, fake } = kioskWith({ phase: "unknown", orderId: "ord_9", payment: { ...card, message: "no answer" } });
    render(Unknown, { context });
    expect(screen.queryAllByRole("button")).toHaveLength(0);
    expect(screen.queryByTestId("unknown-finish")).toBeNull();
    expect(screen.getByTestId("screen-unknown").textContent).not.toMatch(/close|fermer|cerrar/i);
    expect(fake.intents()).toEqual([]);
  });
});

describe("Approved", () => {
  it("says the order is confirmed when Cancel came too late", () => {
    const { context } = kioskWith({ phase: "approved", orderNumber: "43", payment: { ...card, paid: 1500, due: 0, chargedDespiteCancel: true } });
    render(Approved, { context });
    expect(screen.getByTestId("charged-despite-cancel").textContent).toBe("Your payment went through: your order is confirmed.");
    expect(screen.getByTestId("order-number").textContent).toBe("43");
    expect(screen.getByTestId("screen-approved").textContent).not.toMatch(/cancelled|declined/i);
  });

  it("does not mention a cancel otherwise", () => {
    const { context } = kioskWith({ phase: "approved", payment: { ...card, paid: 1500, due: 0 } });
    render(Approved, { context });
    expect(screen.queryByTestId("charged-despite-cancel")).toBeNull();
  });

  it("says when the payment went through the provider's cloud", () => {
    const { context } = kioskWith({ phase: "approved", payment: { ...card, paid: 1500, due: 0, throughCloud: true } });
    render(Approved, { context });
    expect(screen.getByTestId("via-cloud").textContent).toBe("Paid through the provider's cloud.");
    cleanup();
    const lan = kioskWith({ phase: "approved", payment: { ...card, paid: 1500, due: 0, throughCloud: false } });
    render(Approved, { context: lan.context });
    expect(screen.queryByTestId("via-cloud")).toBeNull();
  });

  it("offers the receipt choices and shows the receipt's status", async () => {
    const { context, fake, k } = kioskWith({ phase: "approved", payment: { ...card, paid: 1500, due: 0 }, receipt: { status: "" } });
    render(Approved, { context });
    for (const name of ["Print", "Email", "SMS", "No receipt"]) expect(screen.getByRole("button", { name })).toBeTruthy();
    await fireEvent.click(screen.getByTestId("receipt-print"));
    expect(fake.calls.at(-1)).toEqual({ name: "ChooseReceipt", args: ["print"] });
    k.applyCheckout({ ...fake.state.view, receipt: { choice: "print", status: "working" } });
    flushSync();
    expect(screen.getByTestId("receipt-status").textContent).toContain("Printing your receipt");
    expect(screen.queryByTestId("receipt-print")).toBeNull();
    k.applyCheckout({ ...fake.state.view, receipt: { choice: "print", status: "error" } });
    flushSync();
    expect(screen.getByTestId("receipt-status").textContent).toContain("could not be made");
    expect(screen.getByTestId("receipt-print")).toBeTruthy();
  });
});

describe("PaymentChoice", () => {
  it("offers only the card when nothing is voucher-eligible", async () => {
    const { context, fake } = kioskWith({ voucherEligible: 0 });
    render(PaymentChoice, { context, props: { onBack: () => {} } });
    expect(screen.queryByTestId("pay-voucher")).toBeNull();
    await fireEvent.click(screen.getByTestId("pay-card"));
    expect(fake.calls.at(-1)).toEqual({ name: "Pay", args: ["card"] });
  });

  it("offers meal voucher then card, with the split, when eligible", async () => {
    const { context, fake } = kioskWith({ total: 2000, voucherEligible: 1500 });
    render(PaymentChoice, { context, props: { onBack: () => {} } });
    expect(screen.getByTestId("voucher-split").textContent!.trim()).toBe("€15.00 by meal voucher, then €5.00 by card");
    await fireEvent.click(screen.getByRole("button", { name: /Meal voucher, then card/ }));
    expect(fake.calls.at(-1)).toEqual({ name: "Pay", args: ["voucher_then_card"] });
  });
});

describe("Paying with the phone", () => {
  beforeEach(() => vi.useFakeTimers({ now: new Date("2025-01-10T12:00:00Z") }));
  afterEach(() => vi.useRealTimers());
  const phone = { method: "phone" as const, step: "phone" as const, amount: 1500, paid: 0, due: 1500, deadline: "2025-01-10T12:05:00Z" };

  it("is offered only when the cloud is set up", async () => {
    const off = kioskWith({ voucherEligible: 0 });
    const { unmount } = render(PaymentChoice, { context: off.context, props: { onBack: () => {} } });
    expect(screen.queryByTestId("pay-phone")).toBeNull();
    unmount();
    const { context, fake } = kioskWith({ voucherEligible: 0 }, { info: { phonePay: true } });
    render(PaymentChoice, { context, props: { onBack: () => {} } });
    await fireEvent.click(screen.getByRole("button", { name: /Pay with your phone/ }));
    expect(fake.calls.at(-1)).toEqual({ name: "Pay", args: ["phone"] });
  });

  it("waits for the link, then shows it as a QR code with the time left", async () => {
    const { k, context } = kioskWith({ phase: "paying", payment: phone });
    render(Paying, { context });
    expect(screen.getByTestId("phone-waiting")).toBeTruthy();
    expect(screen.queryByTestId("phone-print")).toBeNull();
    k.applyCheckout({ ...k.checkout, payment: { ...phone, link: "https://pay.example/c/1" } });
    flushSync();
    // The QR code library loads with the first code drawn.
    const qr = await vi.waitFor(() => screen.getByRole("img", { name: "QR code of the payment link for €15.00" }));
    expect(qr.querySelector("path")!.getAttribute("d")!.length).toBeGreaterThan(100);
    expect(screen.getByTestId("phone-time-left").textContent).toBe("This code stays on screen for 5:00");
    await vi.advanceTimersByTimeAsync(61_000);
    expect(screen.getByTestId("phone-time-left").textContent).toBe("This code stays on screen for 3:59");
  });

  it("says when the code opens on this computer only (the demo's provider)", () => {
    const { context } = kioskWith({ phase: "paying", payment: { ...phone, link: "http://127.0.0.1:41234/pay/c/1" } });
    render(Paying, { context });
    expect(screen.getByTestId("phone-local-only").textContent).toContain("this PC only");
    cleanup();
    const real = kioskWith({ phase: "paying", payment: { ...phone, link: "https://pay.example/c/1" } });
    render(Paying, { context: real.context });
    expect(screen.queryByTestId("phone-local-only")).toBeNull();
  });

  it("shows a part paid, prints the code, and cancels", async () => {
    const { context, fake } = kioskWith({ phase: "paying", payment: { ...phone, link: "https://pay.example/c/1", linkPaid: 600 } });
    fake.answers.PrintLink = () => ({ ...fake.state.view, payment: { ...phone, link: "https://pay.example/c/1", linkPaid: 600, linkPrinted: true } });
    render(Paying, { context });
    expect(screen.getByTestId("phone-paid").textContent!.trim()).toBe("€6.00 of €15.00 paid");
    // With money in it the link is never abandoned: no time on screen shown.
    expect(screen.queryByTestId("phone-time-left")).toBeNull();
    await fireEvent.click(screen.getByRole("button", { name: "Print the code and pay at your table" }));
    await fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(fake.intents()).toEqual(["PrintLink", "Cancel"]);
  });
});

describe("Declined and Failed", () => {
  it.each([
    ["cancelled", "en", "Payment cancelled"],
    ["no_card", "en", "No card was presented in time"],
    ["declined", "en", "Payment declined"],
    ["cancelled", "fr", "Paiement annulé"],
    ["no_card", "es", "No se presentó ninguna tarjeta a tiempo"],
  ] as const)("says what happened: %s (%s)", (outcome, language, title) => {
    const { context } = kioskWith({ phase: "declined", language, payment: { ...card, outcome } });
    render(Declined, { context });
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe(title);
    expect(screen.getByTestId("not-charged")).toBeTruthy();
  });


  it("says not charged, retries with a new attempt or cancels the order", async () => {
    const { context, fake } = kioskWith({ phase: "declined", payment: card });
    render(Declined, { context });
    expect(screen.getByText("You have not been charged.")).toBeTruthy();
    expect(screen.queryByTestId("pay-rest-by-card")).toBeNull();
    await fireEvent.click(screen.getByRole("button", { name: "Try again" }));
    await fireEvent.click(screen.getByRole("button", { name: "Cancel the order" }));
    expect(fake.intents()).toEqual(["Retry", "CancelOrder"]);
  });

  it("offers to pay everything by card when the voucher was declined", async () => {
    const { context, fake } = kioskWith({
      phase: "declined",
      total: 2000,
      payment: { method: "voucher_then_card", step: "voucher", amount: 1500, paid: 0, due: 2000 },
    });
    render(Declined, { context });
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Meal voucher declined");
    await fireEvent.click(screen.getByRole("button", { name: "Pay €20.00 by bank card" }));
    expect(fake.intents()).toEqual(["PayRestByCard"]);
  });

  it("never says not charged once a part was charged, and offers no cancel", async () => {
    for (const [phase, C] of [["declined", Declined], ["failed", Failed]] as const) {
      const { context, fake } = kioskWith({
        phase,
        total: 2000,
        payment: { method: "voucher_then_card", step: "card", amount: 500, paid: 1500, due: 500, chargedDespiteCancel: true },
      });
      const { unmount } = render(C, { context });
      expect(screen.queryByTestId("not-charged")).toBeNull();
      expect(screen.getByTestId("partly-charged").textContent).toContain("€15.00 has been charged");
      expect(screen.queryByTestId("cancel-order")).toBeNull();
      await fireEvent.click(screen.getByTestId("retry"));
      expect(fake.intents()).toEqual(["Retry"]);
      unmount();
    }
  });

  it("failed: not charged, try again", async () => {
    const { context, fake } = kioskWith({ phase: "failed", payment: card });
    render(Failed, { context });
    expect(screen.getByTestId("not-charged").textContent).toBe("You have not been charged.");
    await fireEvent.click(screen.getByTestId("retry"));
    expect(fake.intents()).toEqual(["Retry"]);
  });

  it("failed with the terminal silent: pay at the counter with the number, never the technical cause", () => {
    const cause = "dial tcp 127.0.0.1:1: connect: connection refused";
    const { context } = kioskWith(
      { phase: "failed", orderNumber: "42", payment: { ...card, message: cause } },
      { terminal: { state: "unreachable", ready: true } },
    );
    render(Failed, { context });
    expect(screen.getByTestId("pay-at-counter").textContent).toBe("The terminal is not answering. Please pay at the counter.");
    expect(screen.getByTestId("order-number").textContent).toBe("42");
    expect(document.body.textContent).not.toContain("dial tcp");
  });
});

describe("Unavailable", () => {
  it("asks for staff and shows the problem small", () => {
    const { context } = kioskWith({ phase: "unavailable" }, { terminal: { state: "none", ready: false, problem: "no terminal configured" } });
    render(Unavailable, { context });
    expect(screen.getByText(/call a member of staff/)).toBeTruthy();
    expect(screen.getByTestId("terminal-problem").textContent).toContain("no terminal configured");
  });

  it("says plainly that card payment is down, and where to pay", () => {
    const { context } = kioskWith({ phase: "unavailable", language: "fr" }, { terminal: { state: "unreachable", ready: true, problem: "dial tcp: timeout" } });
    render(Unavailable, { context });
    expect(screen.getByTestId("unavailable-body").textContent).toContain("Le paiement par carte est indisponible");
  });
});

describe("Welcome", () => {
  it.each([
    [true, false, "Card payment is available."],
    [false, true, "you can pay with your phone"],
    [false, false, "Card payment is unavailable right now."],
  ])("says before the first touch whether card payment works (card %s, phone %s)", (cardPay, phonePay, text) => {
    const { context } = kioskWith({ phase: "welcome" }, { terminal: { cardPay, phonePay } });
    render(Welcome, { context });
    expect(screen.getByTestId("welcome-pay-ways").textContent).toContain(text);
  });
});

describe("Menu and cart", () => {
  it("adds a product with a quantity from its detail dialog", async () => {
    const { context, fake } = kioskWith({ lines: [], total: 0 });
    render(Menu, { context, props: { onCart: () => {} } });
    expect(screen.getByRole("tab", { name: "Mains" }).getAttribute("aria-selected")).toBe("true");
    await fireEvent.click(screen.getByRole("tab", { name: "Drinks" }));
    await fireEvent.click(screen.getByTestId("product-jus"));
    const dialog = screen.getByRole("dialog", { name: "Fresh orange juice" });
    await fireEvent.click(within(dialog).getByRole("button", { name: "One more" }));
    expect(screen.getByTestId("qty-value").textContent).toBe("2");
    await fireEvent.click(within(dialog).getByRole("button", { name: "Add €8.00" }));
    expect(fake.calls.at(-1)).toEqual({ name: "AddItem", args: ["jus", 2] });
    await vi.waitFor(() => expect(screen.queryByRole("dialog")).toBeNull());
  });

  it("shows a category's picture beside its name, and drops one that does not load", async () => {
    const { context, k } = kioskWith({ lines: [], total: 0 });
    k.catalog = {
      ...k.catalog,
      categories: k.catalog.categories.map((c, i) => ({ ...c, image: i === 0 ? "/media/images/mains.svg" : undefined })),
    };
    render(Menu, { context, props: { onCart: () => {} } });
    const first = k.catalog.categories[0];
    const img = screen.getByTestId(`category-image-${first.id}`) as HTMLImageElement;
    expect(img.getAttribute("src")).toBe("/media/images/mains.svg?w=160");
    expect(img.getAttribute("alt")).toBe("");
    expect(screen.getByRole("tab", { name: "Mains" })).toBeTruthy();
    expect(screen.queryByTestId(`category-image-${k.catalog.categories[1].id}`)).toBeNull();
    await fireEvent.error(img);
    expect(img.hidden).toBe(true);
  });

  it("edits cart lines and shows taxes and total", async () => {
    const { context, fake } = kioskWith();
    render(Cart, { context, props: { onBack: () => {}, onPay: () => {} } });
    expect(screen.getByTestId("cart-total").textContent).toBe("€15.00");
    expect(screen.getByTestId("cart-taxes").textContent).toContain("€1.36");
    await fireEvent.click(screen.getByRole("button", { name: "One more Croque-monsieur" }));
    await fireEvent.click(screen.getByRole("button", { name: "Remove Croque-monsieur" }));
    expect(fake.calls.slice(-2)).toEqual([
      { name: "SetQuantity", args: ["l1", 3] },
      { name: "SetQuantity", args: ["l1", 0] },
    ]);
  });
});

describe("Cancelling an order before paying", () => {
  it("asks first when the cart holds something: No keeps the order, Yes empties it", async () => {
    const { context, fake } = kioskWith();
    render(Menu, { context, props: { onCart: () => {} } });
    await fireEvent.click(screen.getByRole("button", { name: "Cancel the order" }));
    const dialog = screen.getByRole("alertdialog", { name: "Cancel your order?" });
    expect(document.activeElement).toBe(within(dialog).getByRole("button", { name: "No, continue my order" }));
    await fireEvent.click(within(dialog).getByRole("button", { name: "No, continue my order" }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(fake.intents()).toEqual([]);
    await fireEvent.click(screen.getByRole("button", { name: "Cancel the order" }));
    await fireEvent.keyDown(screen.getByRole("alertdialog"), { key: "Escape" });
    expect(screen.queryByRole("alertdialog")).toBeNull();
    await fireEvent.click(screen.getByRole("button", { name: "Cancel the order" }));
    await fireEvent.click(screen.getByRole("button", { name: "Yes, cancel my order" }));
    expect(fake.intents()).toEqual(["Abandon"]);
  });

  it("leaves an empty order at once, from the cart as from the menu", async () => {
    const { context, fake } = kioskWith({ lines: [], total: 0, taxes: [] });
    render(Cart, { context, props: { onBack: () => {}, onPay: () => {} } });
    await fireEvent.click(screen.getByRole("button", { name: "Cancel the order" }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(fake.intents()).toEqual(["Abandon"]);
  });
});

describe("Allergens", () => {
  const croissant = { id: "croissant", name: { en: "Croissant", fr: "Croissant" }, price: 130, vatRate: 1000, mealVoucher: true, allergens: ["gluten", "milk", "eggs"] };

  it.each([
    ["en", "Allergens: gluten, milk and eggs"],
    ["fr", "Allergènes : gluten, lait et œufs"],
    ["es", "Alérgenos: gluten, leche y huevos"],
  ] as const)("are said in the customer's language (%s)", (language, text) => {
    const { context } = kioskWith({ language, lines: [] });
    render(ProductDetail, { context, props: { product: croissant, onClose: () => {} } });
    expect(screen.getByTestId("allergens").textContent).toBe(text);
  });
});

describe("TopBar", () => {
  it("wears the DEMO ribbon with the simulated terminal and labels the status dot", () => {
    const { context } = kioskWith({}, { terminal: { demo: true, state: "connected" } });
    render(TopBar, { context });
    expect(screen.getByTestId("demo-ribbon").textContent).toBe("DEMO: no real payments");
    expect(screen.getByRole("img", { name: "Payment terminal: connected" })).toBeTruthy();
  });

  it("has no ribbon for a real terminal, and switches the language", async () => {
    const { context, fake } = kioskWith();
    render(TopBar, { context });
    expect(screen.queryByTestId("demo-ribbon")).toBeNull();
    await fireEvent.click(screen.getByRole("button", { name: "ES Español" }));
    expect(fake.calls.at(-1)).toEqual({ name: "SetLanguage", args: ["es"] });
  });
});
