import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { useTransport } from "./lib/bridge";
import type { OrderingView } from "./screens/Ordering.svelte";

const target = document.getElementById("app");
if (!target) throw new Error("missing #app element");

// ?mock: a scripted fake backend to look at the screens without the Go side.
// Loaded on demand so it stays out of the main bundle.
const query = new URLSearchParams(location.search);
if (query.has("mock")) {
  const { mockOptionsFromURL, mockTransport } = await import("./lib/mock");
  useTransport(mockTransport(mockOptionsFromURL(location.search)));
}
const view = query.get("view");

export default mount(App, {
  target,
  props: { view: view === "cart" || view === "choice" ? (view as OrderingView) : "menu" },
});
