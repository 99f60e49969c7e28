import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { installLockdown } from "./lib/lockdown";
import type { OrderingView } from "./screens/Ordering.svelte";

const target = document.getElementById("app");
if (!target) throw new Error("missing #app element");

const query = new URLSearchParams(location.search);

// The navigation lock (lib/lockdown.ts): no leaving the app, no context menu,
// no zoom, no browser tools. In every mode, desktop and browser, built or
// not, except on the dev server with ?unlocked (`npm run dev`, then
// /?unlocked), where developers want the context menu and devtools. A build
// replaces import.meta.env.DEV with false: it ignores ?unlocked.
if (!(import.meta.env.DEV && query.has("unlocked"))) installLockdown(window);

const view = query.get("view");

export default mount(App, {
  target,
  props: { view: view === "cart" || view === "choice" ? (view as OrderingView) : "menu" },
});
