import { defineConfig } from "vitest/config";
import type { Plugin } from "vite";
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { svelteTesting } from "@testing-library/svelte/vite";
import { defaultDevServer, devProxy, wailsMedia } from "./devproxy.ts";

// Vite empties dist/ on every build, but Go's //go:embed needs dist/ to hold a
// file before the first frontend build, so the placeholder is emitted again.
function keepDistPlaceholder(): Plugin {
  return {
    name: "comptoir:keep-dist-placeholder",
    apply: "build",
    generateBundle() {
      this.emitFile({ type: "asset", fileName: ".gitkeep", source: "" });
    },
  };
}

export default defineConfig(({ mode }) => ({
  // `npm run dev`: the UI here, the API from a running `comptoir serve
  // --demo`. Not under `wails dev` (`npm run dev:desktop`, mode desktop):
  // there the window calls the Go bindings, and Wails serves /media itself.
  plugins: [svelte(), svelteTesting(), keepDistPlaceholder(), ...(mode === "desktop" ? [wailsMedia()] : [])],
  server: mode === "desktop" ? {} : { proxy: devProxy(process.env.COMPTOIR_DEV_SERVER || defaultDevServer) },
  test: {
    include: ["src/**/*.test.ts"],
    // Component tests mount into jsdom; the pure modules do not mind it.
    environment: "jsdom",
  },
}));
