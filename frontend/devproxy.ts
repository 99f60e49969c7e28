// `npm run dev` develops on the real server: the Vite dev server serves the
// UI with hot reload and passes /api (the intents, the staff calls, the
// event stream) and /media (the menu's pictures) to a `comptoir serve
// --demo` the developer started (README, Development). No fake backend:
// what the screens show is what the backend decides.

import type { Plugin, ProxyOptions } from "vite";

/** The server `npm run dev` passes the API to: COMPTOIR_DEV_SERVER, default `comptoir serve`'s own address. */
export const defaultDevServer = "http://127.0.0.1:8080";

/**
 * proxiedOrigin is the Origin header the backend is given for a request the
 * dev server passes on. The backend refuses any Origin but its own; the
 * page the dev server serves is same-origin with the dev server, so its
 * requests are given the backend's origin. Any other Origin is passed as
 * it is: a page of another site is still refused, through the dev server
 * as without it.
 */
export function proxiedOrigin(origin: string | undefined, devHost: string | undefined, target: string): string | undefined {
  if (!origin || !devHost) return origin;
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return origin;
  }
  if (o.host.toLowerCase() !== devHost.toLowerCase() || (o.protocol !== "http:" && o.protocol !== "https:")) return origin;
  return new URL(target).origin;
}

/** devProxy is the dev server's proxy table: /api and /media to the target. */
export function devProxy(target: string): Record<string, ProxyOptions> {
  const options: ProxyOptions = {
    target,
    // The backend answers loopback Host names only, and checks Origin against Host.
    changeOrigin: true,
    configure(proxy) {
      proxy.on("proxyReq", (proxyReq, req) => {
        const origin = proxiedOrigin(req.headers.origin, req.headers.host, target);
        if (origin !== undefined) proxyReq.setHeader("origin", origin);
      });
    },
  };
  return { "/api": options, "/media": options };
}

/**
 * wailsMedia: under `wails dev`, the window's requests go to this dev
 * server first, and Wails serves one itself only when the answer is 404.
 * /media (the menu's pictures) is the app's own, but the dev server would
 * answer it with index.html: it answers 404 instead.
 */
export function wailsMedia(): Plugin {
  return {
    name: "comptoir:wails-media",
    apply: "serve",
    configureServer(server) {
      server.middlewares.use("/media", (_req, res) => {
        res.statusCode = 404;
        res.end();
      });
    },
  };
}
