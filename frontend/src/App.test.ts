import { render, screen } from "@testing-library/svelte";
import { describe, expect, it } from "vitest";
import App from "./App.svelte";
import { EventCheckout } from "./lib/contract";
import { baseView, fakeTransport } from "./test/fakes";

describe("App", () => {
  it("shows the screen the backend's phase chooses, following events", async () => {
    const fake = fakeTransport({ ...baseView, phase: "welcome" });
    render(App, { props: { api: fake.bridge } });
    expect(await screen.findByTestId("screen-welcome")).toBeTruthy();
    fake.emit(EventCheckout, { ...baseView, phase: "ordering" });
    expect(await screen.findByTestId("screen-menu")).toBeTruthy();
    fake.emit(EventCheckout, { ...baseView, phase: "paying", payment: { method: "card", step: "card", amount: 1500, paid: 0, due: 1500 } });
    expect(await screen.findByTestId("screen-paying")).toBeTruthy();
    fake.emit(EventCheckout, { ...baseView, phase: "unknown" });
    expect(await screen.findByTestId("screen-unknown")).toBeTruthy();
  });

  it("translates the backend's error keys", async () => {
    const fake = fakeTransport({ ...baseView, language: "fr", error: "error.cart_empty" });
    render(App, { props: { api: fake.bridge } });
    expect((await screen.findByRole("alert")).textContent).toContain("Votre panier est vide.");
  });
});
