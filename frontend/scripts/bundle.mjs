// The customer bundle of a frontend build: the files a kiosk's first screen
// loads, and so everything the customer's own order (welcome, menu, cart,
// paying, approved) runs on. That is index.html, the scripts and styles it
// names (the entry, its preloaded imports, its stylesheets), and every
// script those import statically. A chunk reached only through import()
// (staff mode, the QR code of a payment by phone) is not in it: it loads
// when that screen first opens.
//
// Each file is counted gzipped at level 9, what a server or an installer's
// compressor sends. src/bundle.test.ts holds the budget; `make bench`'s
// report shows the same numbers (scripts/bench/report).
//
//   node frontend/scripts/bundle.mjs [DIST]   prints the JSON (default DIST: frontend/dist)

import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";

/** The customer bundle's budget, gzipped: the frontend's tests hold it, make bench reports it. */
export const budgetBytes = 60 * 1024;

// Static imports in built ES modules: `import{a as b}from"./x.js"`,
// `import"./x.js"`, `export{a}from"./x.js"`. Never import("./x.js"):
// the parenthesis is what makes an import dynamic.
const staticImport = /(?:^|[;}\s])(?:import|export)\s*(?:[\w$*{][^"'`();]*?from\s*)?["'](\.{1,2}\/[^"']+)["']/g;

/** attribute reads one attribute of an HTML tag's text. */
function attribute(tag, name) {
  const m = tag.match(new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)'|([^\\s>]+))`, "i"));
  return m ? (m[2] ?? m[3] ?? m[4]) : undefined;
}

/** entryFiles: what index.html loads by itself, as paths inside dist. */
function entryFiles(html) {
  const files = [];
  for (const tag of html.match(/<(script|link)\b[^>]*>/gi) ?? []) {
    const isScript = /^<script/i.test(tag);
    const rel = (attribute(tag, "rel") ?? "").toLowerCase();
    const url = isScript ? attribute(tag, "src") : attribute(tag, "href");
    if (!url || /^[a-z]+:|^\/\//i.test(url)) continue;
    if (isScript || rel === "stylesheet" || rel === "modulepreload") files.push(url.replace(/^\.?\//, ""));
  }
  return files;
}

function measure(dist, file) {
  const bytes = readFileSync(join(dist, file));
  return { file, bytes: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length };
}

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? walk(p) : [p];
  });
}

/**
 * customerBundle measures a build's customer bundle. It throws when a file
 * index.html or a script names is missing: a broken build has no size.
 */
export function customerBundle(dist) {
  const html = readFileSync(join(dist, "index.html"), "utf8");
  const seen = new Set(["index.html"]);
  const queue = entryFiles(html);
  while (queue.length) {
    const file = queue.shift();
    if (seen.has(file)) continue;
    seen.add(file);
    if (!file.endsWith(".js")) continue;
    const text = readFileSync(join(dist, file), "utf8");
    for (const m of text.matchAll(staticImport)) {
      queue.push(relative(dist, resolve(dist, dirname(file), m[1])).split(sep).join("/"));
    }
  }
  const files = [...seen].sort().map((f) => measure(dist, f));
  const later = walk(dist)
    .map((p) => relative(dist, p).split(sep).join("/"))
    .filter((f) => !seen.has(f) && !f.split("/").some((part) => part.startsWith(".")))
    .sort()
    .map((f) => measure(dist, f));
  const sum = (list, key) => list.reduce((n, f) => n + f[key], 0);
  return {
    files,
    bytes: sum(files, "bytes"),
    gzip: sum(files, "gzip"),
    budget: budgetBytes,
    later,
    laterGzip: sum(later, "gzip"),
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const dist = process.argv[2] ?? join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
  process.stdout.write(JSON.stringify(customerBundle(dist), null, 1) + "\n");
}
