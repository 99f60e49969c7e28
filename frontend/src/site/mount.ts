// The restaurant's screens served by browser mode besides the kiosk:
// /kitchen (?station=NAME, ?lang=fr|en|es) and /board (?lang=...). They
// read the kitchen's API and send bumps; nothing else of the kiosk.
import { mount } from "svelte";
import Board from "./Board.svelte";
import Kitchen from "./Kitchen.svelte";
import { langOf } from "./words";

export type SitePage = "kitchen" | "board";

export function mountSitePage(page: SitePage, target: HTMLElement, query: URLSearchParams) {
  document.title = page === "kitchen" ? "Comptoir · Cuisine" : "Comptoir";
  if (page === "kitchen") {
    return mount(Kitchen, { target, props: { station: query.get("station") ?? "", lang: langOf(query.get("lang")) } });
  }
  return mount(Board, { target, props: { lang: query.has("lang") ? langOf(query.get("lang")) : null } });
}
