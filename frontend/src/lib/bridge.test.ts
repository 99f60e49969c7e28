import { describe, expect, it, vi } from "vitest";
import { info, ready, version } from "./bridge";

describe("bridge", () => {
  it("asks the desktop binding for the version", async () => {
    const host = { go: { main: { App: { Version: async () => "1.2.3", Ready: async () => {} } } } };
    expect(await version(host)).toBe("1.2.3");
  });

  it("falls back to browser mode without Wails bindings", async () => {
    expect(await version({})).toBe("browser");
    expect(await version({ go: {} })).toBe("browser");
    await expect(ready({})).resolves.toBeUndefined();
  });

  it("reports readiness to the desktop shell", async () => {
    const Ready = vi.fn(async () => {});
    await ready({ go: { main: { App: { Version: async () => "", Ready } } } });
    expect(Ready).toHaveBeenCalledOnce();
  });

  it("reads the installation's info from the desktop binding", async () => {
    const host = {
      go: {
        main: {
          App: {
            Version: async () => "1.2.3",
            Info: async () => ({
              version: "1.2.3",
              demo: true,
              terminal: "http://127.0.0.1:16125/localapi/v4",
              ready: true,
              problem: "",
            }),
            Ready: async () => {},
          },
        },
      },
    };
    expect(await info(host)).toEqual({
      version: "1.2.3",
      demo: true,
      terminal: "http://127.0.0.1:16125/localapi/v4",
      ready: true,
      problem: "",
    });
    expect(await info({})).toEqual({ version: "browser", demo: false, terminal: "", ready: false, problem: "" });
  });
});
