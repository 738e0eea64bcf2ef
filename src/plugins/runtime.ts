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
import { PluginFailure } from "./errors.ts";

/** Limits every call into plugin code runs under. */
export interface Budget {
  /** Lua VM instructions per call (ptywright: 5,000,000). */
  instructions: number;
  /** Wall-clock milliseconds per call (ptywright: 5000). */
  wallMs: number;
  /** Bytes the VM may allocate in all. */
  memoryBytes: number;
}

/** ptywright's limits. */
export const DEFAULT_BUDGET: Budget = {
  instructions: 5_000_000,
  wallMs: 5000,
  memoryBytes: 64 * 1024 * 1024,
};

/** A loaded plugin's code: a table of exported functions taking and returning JSON-like values. */
export interface PluginRuntime {
  /** Names of the exported functions, sorted. */
  readonly exports: string[];
  /** Calls an export with one argument; throws {@link PluginFailure} on any failure. */
  call(fn: string, arg: unknown): unknown;
  /** Frees the VM. */
  close(): void;
}

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
