/**
 * The plugin runtime seam: what adapters and the registry need from a
 * plugin's code, whatever it runs in. Lua (wasmoon) is the one runtime
 * today; ptywright reserves `wasm`, which would be a second implementation
 * of {@link PluginRuntime} chosen in {@link createRuntime}, with no change to
 * adapters, the registry or the built-ins.
 *
 * @module
 */
import type { Manifest } from "./manifest.ts";
import { type Budget, DEFAULT_BUDGET, type PluginRuntime } from "./types.ts";

export { type Budget, DEFAULT_BUDGET, type PluginRuntime } from "./types.ts";
import { PluginFailure } from "./errors.ts";

/** Creates the runtime the manifest names, running `source`. */
export async function createRuntime(
  manifest: Manifest,
  source: string,
  budget: Budget = DEFAULT_BUDGET,
): Promise<PluginRuntime> {
  if (manifest.runtime !== "lua") throw new PluginFailure(`plugin \`${manifest.name}\` is not a Lua plugin`);
  const { LuaRuntime } = await import("./lua.ts");
  return await LuaRuntime.create(manifest, source, budget);
}
