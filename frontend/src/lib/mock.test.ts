import { describe, expect, it } from "vitest";
import { createBridge } from "./bridge";
import { EventCheckout, type CheckoutView } from "./contract";
import { mockOptionsFromURL, mockTransport } from "./mock";

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("dev mock", () => {
  it("is off without ?mock and reads its script from the URL", () => {
    expect(mockOptionsFromURL("?phase=paying")).toBeUndefined();
    expect(mockOptionsFromURL("?mock=declined&phase=paying&lang=es&hold")).toEqual({
      outcome: "declined",
      phase: "paying",
      language: "es",
      hold: true,
    });
  });

  it("plays a whole order: start, add, pay, approved, receipt, finish", async () => {
    const b = createBridge(mockTransport({ msPerSecond: 1 }));
    const seen: CheckoutView[] = [];
    b.on(EventCheckout, (v) => seen.push(v));
    expect((await b.call("Start", "en")).phase).toBe("dining");
    expect((await b.call("ChooseDining", "eat_in")).phase).toBe("ordering");
    const v = await b.call("AddItem", "croque", 2);
    expect(v.total).toBe(1500);
    expect(v.voucherEligible).toBe(1500);
    expect((await b.call("Pay", "card")).phase).toBe("paying");
    await wait(20);
    expect(seen.at(-1)?.phase).toBe("approved");
    expect(seen.at(-1)?.orderNumber).toBeTruthy();
    await b.call("ChooseReceipt", "print");
    await wait(20);
    expect(seen.at(-1)?.receipt).toEqual({ choice: "print", status: "done" });
    expect((await b.call("Finish")).phase).toBe("welcome");
  });

  it("refuses out of phase with an error key, and a late cancel is charged", async () => {
    const b = createBridge(mockTransport({ msPerSecond: 1, outcome: "late-cancel" }));
    expect((await b.call("Pay", "card")).error).toBe("error.wrong_phase");
    await b.call("Start", "fr");
    await b.call("ChooseDining", "take_away");
    await b.call("AddItem", "eau", 1);
    await b.call("Pay", "card");
    expect((await b.call("Cancel")).phase).toBe("canceling");
    await wait(20);
    const v = await b.call("Checkout");
    expect(v.phase).toBe("approved");
    expect(v.payment?.chargedDespiteCancel).toBe(true);
  });
});
