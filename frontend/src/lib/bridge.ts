// The one seam between the UI and the backend. In the desktop window Wails
// injects the Go bindings as window.go; in browser mode (served by
// `comptoir serve`, not built yet) they are absent. Reaching them through
// window.go, rather than the generated wailsjs modules, keeps the frontend
// build independent of binding generation.

/** AppInfo mirrors app.go's AppInfo. */
export interface AppInfo {
  version: string;
  demo: boolean;
  terminal: string;
  /** Unfinished payments are recovered: orders may start. */
  ready: boolean;
  /** Why payments cannot be taken, in a sentence; "" when fine. */
  problem: string;
}

interface DesktopApp {
  Version(): Promise<string>;
  Info?(): Promise<AppInfo>;
  Ready(): Promise<void>;
}

interface WailsHost {
  go?: { main?: { App?: DesktopApp } };
}

function desktop(host: WailsHost = globalThis as WailsHost): DesktopApp | undefined {
  return host.go?.main?.App;
}

/** version is the backend build's version, or "browser" outside the desktop. */
export async function version(host?: WailsHost): Promise<string> {
  const app = desktop(host);
  return app ? app.Version() : "browser";
}

/** ready tells the desktop shell the first screen is painted so it can show the window. */
export async function ready(host?: WailsHost): Promise<void> {
  await desktop(host)?.Ready();
}

/** info describes the installation: version, demo mode, terminal address. */
export async function info(host?: WailsHost): Promise<AppInfo> {
  const app = desktop(host);
  if (app?.Info) return app.Info();
  return { version: app ? await app.Version() : "browser", demo: false, terminal: "", ready: false, problem: "" };
}
