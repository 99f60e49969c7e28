import { cleanup, fireEvent, render, screen } from "@testing-library/svelte";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ageClass, formatAge, type OrdersView } from "./api";
import Board from "./Board.svelte";
import Kitchen from "./Kitchen.svelte";

const ticket = (n: string, lines = 1) => ({
  key: `A/o-${n}`,
  orderId: `o-${n}`,
  number: n,
  kiosk: "A",
  dining: "take_away",
  paidAt: new Date(Date.now() - 400_000).toISOString(),
  lines: Array.from({ length: lines }, (_, i) => ({
    index: i,
    product: `p${i}`,
    name: { fr: `Plat ${i}`, en: `Dish ${i}` },
    qty: 2,
    choices: ["sans oignon"],
    ready: false,
  })),
  seq: 1,
});

const view = (over: Partial<OrdersView> = {}): OrdersView => ({
  station: "",
  stations: ["grill"],
  version: 1,
  now: Date.now(),
  orders: [ticket("A1", 2), ticket("A2")],
  recent: [],
  allDay: [{ product: "p0", name: { fr: "Plat 0" }, qty: 4 }],
  warnAfter: 300,
  lateAfter: 600,
  online: true,
  ...over,
});

// A fetch that answers the first GET, then holds every later one (the
// long poll), and records the bumps.
function fakeFetch(first: unknown) {
  const bumps: unknown[] = [];
  let gets = 0;
  const f = vi.fn(async (url: string, init?: RequestInit) => {
    if (init?.method === "POST") {
      bumps.push(JSON.parse(String(init.body)));
      return new Response(JSON.stringify(first), { status: 200 });
    }
    if (gets++ === 0) return new Response(JSON.stringify(first), { status: 200 });
    return new Promise<Response>(() => {});
  });
  vi.stubGlobal("fetch", f);
  return { f, bumps };
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe("Kitchen", () => {
  it("shows the tickets, their lines and choices, and bumps by touch and by key", async () => {
    const { bumps } = fakeFetch(view());
    render(Kitchen, { station: "", lang: "fr" });
    expect(await screen.findByText("Prêt A1")).toBeTruthy();
    expect(screen.getAllByText("sans oignon").length).toBe(3);
    expect(screen.getAllByText("À emporter").length).toBe(2);
    await fireEvent.click(screen.getByText("Prêt A2"));
    await fireEvent.click(screen.getByText("Plat 1"));
    await fireEvent.keyDown(window, { key: "1" });
    expect(bumps).toEqual([
      { key: "A/o-A2", line: -1, action: "ready", station: "" },
      { key: "A/o-A1", line: 1, action: "ready", station: "" },
      { key: "A/o-A1", line: -1, action: "ready", station: "" },
    ]);
  });

  it("strikes a ticket voided after it reached the kitchen, and says when the site is lost", async () => {
    fakeFetch(view({ orders: [{ ...ticket("A3"), void: "refunded" }], online: false }));
    render(Kitchen, { station: "", lang: "en" });
    expect(await screen.findByText("REFUNDED")).toBeTruthy();
    expect(screen.getByRole("alert").textContent).toContain("Site connection lost");
    expect(document.querySelector("article.void")).toBeTruthy();
  });
});

describe("age", () => {
  it("turns warn then late at the kitchen's thresholds", () => {
    expect(ageClass(299, 300, 600)).toBe("ok");
    expect(ageClass(300, 300, 600)).toBe("warn");
    expect(ageClass(601, 300, 600)).toBe("late");
    expect(formatAge(125)).toBe("2:05");
  });
});

describe("Board", () => {
  it("shows the numbers preparing and ready, in the language asked", async () => {
    fakeFetch({ version: 3, preparing: ["A4", "B2"], ready: ["A1"], chime: false, online: true });
    render(Board, { lang: "es" });
    expect(await screen.findByText("A1")).toBeTruthy();
    expect(screen.getByText("En preparación")).toBeTruthy();
    expect(screen.getByText("Listo")).toBeTruthy();
    expect(screen.getByText("B2")).toBeTruthy();
  });
});
