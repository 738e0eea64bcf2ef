/**
 * The plugin registry of one host: the built-in claude-code plugin plus the
 * trusted-local plugins loaded by `serve --plugin` or `plugin.load`. Each
 * adapter gets its own runtime instance; `lua` matcher predicates run on a
 * separate instance per plugin (ptywright's v1 rule: no shared module state).
 *
 * @module
 */
import { RpcError } from "../errors.ts";
import type { Result } from "../spec/results.ts";
import { CLAUDE_CODE_MANIFEST, ClaudeCodePlugin } from "./claude_code.ts";
import { internal, invalidParams, PluginFailure } from "./errors.ts";
import { loadManifest, type Manifest, PERMISSIONS } from "./manifest.ts";
import type { MatchOutcome } from "./matcher.ts";
import { type Budget, createRuntime, DEFAULT_BUDGET, type PluginRuntime } from "./runtime.ts";

/** One registered plugin. */
export interface PluginEntry {
  manifest: Manifest;
  builtin: boolean;
  /** The manifest file, for loaded plugins. */
  path: string | null;
  /** A fresh instance of the plugin's code. */
  instantiate(): Promise<PluginRuntime>;
}

/** What a `lua` predicate receives. */
export interface PredicateInput {
  screen: string;
  transcript: string;
  sequence: number;
  stable_ms: number;
  process_exited: boolean;
  markers: Record<string, number>;
  cursor: number;
  params: unknown;
}

const isObj = (v: unknown): v is Record<string, unknown> => !!v && typeof v === "object" && !Array.isArray(v);

/** Plugins by name. */
export class PluginRegistry {
  #entries = new Map<string, PluginEntry>();
  #predicates = new Map<string, PluginRuntime>();
  #pending = new Map<string, Promise<PluginRuntime>>();

  constructor(readonly budget: Budget = DEFAULT_BUDGET) {
    this.#entries.set("claude-code", {
      manifest: CLAUDE_CODE_MANIFEST,
      builtin: true,
      path: null,
      instantiate: () => Promise.resolve(new ClaudeCodePlugin()),
    });
  }

  /** Built-in manifests. */
  builtins(): Manifest[] {
    return [...this.#entries.values()].filter((e) => e.builtin).map((e) => e.manifest);
  }

  /** Every manifest, sorted by name. */
  list(): Manifest[] {
    return [...this.#entries.values()].map((e) => e.manifest).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The plugin of that name, or -32602 `unknown plugin: X`. */
  get(name: string): PluginEntry {
    const e = this.#entries.get(name);
    if (!e) throw invalidParams(`unknown plugin: ${name}`);
    return e;
  }

  has(name: string): boolean {
    return this.#entries.has(name);
  }

  /**
   * Loads a plugin from its manifest file: the manifest is validated, the
   * entrypoint resolved inside its directory and run once (so a broken
   * plugin fails here, not at adapter.start). Errors are -32603.
   */
  async load(manifestPath: string): Promise<string> {
    let loaded;
    try {
      loaded = await loadManifest(manifestPath);
    } catch (e) {
      throw internal((e as Error).message);
    }
    const { manifest, source, path } = loaded;
    if (this.#entries.has(manifest.name)) throw internal(`plugin \`${manifest.name}\` is already registered`);
    const budget = this.budget;
    const instantiate = async () => {
      try {
        return await createRuntime(manifest, source, budget);
      } catch (e) {
        throw internal((e as Error).message);
      }
    };
    const probe = await instantiate();
    if (!probe.exports.includes("classify") && manifest.kind === "adapter") {
      probe.close();
      throw internal(`lua plugin \`${manifest.name}\` failed: an adapter plugin must export \`classify\``);
    }
    this.#predicates.set(manifest.name, probe);
    this.#entries.set(manifest.name, { manifest, builtin: false, path, instantiate });
    return manifest.name;
  }

  /** Removes a loaded plugin; `live` says whether adapters are bound to it. */
  unload(name: string, live: boolean): void {
    const e = this.#entries.get(name);
    if (!e) throw invalidParams(`unknown plugin: ${name}`);
    if (e.builtin) throw invalidParams(`plugin \`${name}\` is built in and cannot be unloaded`);
    if (live) throw invalidParams(`plugin \`${name}\` has live adapters; call adapter.close first`);
    this.#entries.delete(name);
    this.#predicates.get(name)?.close();
    this.#predicates.delete(name);
  }

  /** The registry-side instance of a plugin (describe, predicates). */
  async instance(name: string): Promise<PluginRuntime> {
    const have = this.#predicates.get(name);
    if (have) return have;
    const entry = this.get(name);
    let p = this.#pending.get(name);
    if (!p) {
      p = entry.instantiate();
      this.#pending.set(name, p);
    }
    try {
      const rt = await p;
      this.#predicates.set(name, rt);
      return rt;
    } finally {
      this.#pending.delete(name);
    }
  }

  /** plugin.describe: the plugin's own describe(), else its exports sorted into intents and matchers. */
  async describe(name: string): Promise<Result<"plugin.describe">> {
    const entry = this.get(name);
    const rt = await this.instance(name);
    let intents: unknown[] = [];
    let waitMatchers: unknown[] = [];
    let states: unknown[] = [];
    if (rt.exports.includes("describe")) {
      let d: unknown;
      try {
        d = rt.call("describe", {});
      } catch (e) {
        throw internal((e as Error).message);
      }
      const o = isObj(d) ? d : {};
      const list = (v: unknown) => (Array.isArray(v) ? v : isObj(v) ? Object.values(v) : []);
      intents = list(o.intents);
      waitMatchers = list(o.wait_matchers);
      states = list(o.states);
    } else {
      const fns = rt.exports.filter((n) => n !== "classify" && n !== "describe");
      intents = fns.filter((n) => !n.endsWith("_matcher")).map((name) => ({ name }));
      waitMatchers = fns.filter((n) => n.endsWith("_matcher")).map((name) => ({ name }));
    }
    return { plugin: name, manifest: entry.manifest, intents, wait_matchers: waitMatchers, states };
  }

  /**
   * Runs a predicate for the `lua` matcher. An error, a missing plugin or a
   * value that is not a boolean / `{matched}` table counts as "did not fire".
   */
  predicate(plugin: string, predicate: string, input: PredicateInput): MatchOutcome | null {
    const rt = this.#predicates.get(plugin);
    if (!rt || !rt.exports.includes(predicate)) return null;
    let r: unknown;
    try {
      r = rt.call(predicate, input);
    } catch (e) {
      if (e instanceof PluginFailure || e instanceof RpcError) return null;
      throw e;
    }
    if (r === true) return { kind: "lua", plugin, predicate };
    if (!isObj(r) || r.matched !== true) return null;
    return {
      kind: "lua",
      plugin,
      predicate,
      ...(r.evidence !== undefined ? { evidence: r.evidence } : {}),
      ...(r.capture !== undefined ? { capture: r.capture } : {}),
    };
  }

  /** Makes sure a plugin's predicate instance exists (the matcher loop is synchronous). */
  async prepare(plugin: string): Promise<void> {
    if (this.#entries.has(plugin)) await this.instance(plugin);
  }

  /** plugin.capabilities. */
  capabilities(): Result<"plugin.capabilities"> {
    return {
      permissions: [...PERMISSIONS],
      embedded_lua: true,
      wasm: false,
      builtin_plugins: this.builtins(),
    };
  }

  close(): void {
    for (const rt of this.#predicates.values()) rt.close();
    this.#predicates.clear();
  }
}
