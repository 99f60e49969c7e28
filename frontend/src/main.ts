import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { useTransport } from "./lib/bridge";
import { installLockdown } from "./lib/lockdown";
import { useStaffTransport } from "./lib/staffBridge";
import type { OrderingView } from "./screens/Ordering.svelte";

const target = document.getElementById("app");
if (!target) throw new Error("missing #app element");

const query = new URLSearchParams(location.search);

// The navigation lock (lib/lockdown.ts): no leaving the app, no context menu,
// no zoom, no browser tools. In every mode, desktop and browser, built or
// not, except the dev server's mock with ?unlocked (`npm run dev`, then
// /?mock&unlocked), where developers want the context menu and devtools.
// A build ignores ?unlocked.
if (!(import.meta.env.DEV && query.has("mock") && query.has("unlocked"))) installLockdown(window);

// ?mock: a scripted fake backend to look at the screens without the Go side,
// on the dev server only (`npm run dev`, `wails dev`): a build replaces
// import.meta.env.DEV with false and drops this branch, mocks and all, so
// no release carries a fake backend (scripts/check-release.sh checks).
if (import.meta.env.DEV && query.has("mock")) {
  const [{ mockOptionsFromURL, mockTransport }, { mockStaffTransport, staffMockOptionsFromURL }] = await Promise.all([
    import("./lib/mock"),
    import("./lib/staffMock"),
  ]);
  const kiosk = mockTransport(mockOptionsFromURL(location.search));
  useTransport(kiosk);
  // Staff: PIN 1234 (&staff=setup: first run). Releasing the customer
  // screen ends the mock's order as Finish does.
  useStaffTransport(
    mockStaffTransport({ ...staffMockOptionsFromURL(location.search), closeCheckout: () => kiosk.call("Finish", []) }),
  );
}
const view = query.get("view");
// /kitchen and /board are the restaurant's screens (src/site/), loaded
// only there.
const sitePage = location.pathname.replace(/\/$/, "");

export default sitePage === "/kitchen" || sitePage === "/board"
  ? (await import("./site/mount")).mountSitePage(sitePage === "/kitchen" ? "kitchen" : "board", target, query)
  : mount(App, {
      target,
      props: { view: view === "cart" || view === "choice" ? (view as OrderingView) : "menu" },
    });
