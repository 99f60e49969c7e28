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
// /kitchen and /board are the restaurant's screens (src/site/), loaded
// only there.
const sitePage = location.pathname.replace(/\/$/, "");

export default sitePage === "/kitchen" || sitePage === "/board"
  ? (await import("./site/mount")).mountSitePage(sitePage === "/kitchen" ? "kitchen" : "board", target, query)
  : mount(App, {
      target,
      props: { view: view === "cart" || view === "choice" ? (view as OrderingView) : "menu" },
    });
