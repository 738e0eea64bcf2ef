/**
 * The plugin host of one paneflow host: the registry, the adapters, and
 * whether `plugin.load` / `plugin.unload` are granted (`serve
 * --allow-plugin-load`).
 *
 * @module
 */
import type { PanePool } from "../core/pane/pool.ts";
import type { Sessions } from "../session/mod.ts";
import { Adapters } from "./adapters.ts";
import { PluginRegistry } from "./registry.ts";
import { type Budget, DEFAULT_BUDGET } from "./runtime.ts";

/** Options of `serve` for plugins. */
export interface PluginOptions {
  /** `--allow-plugin-load`. */
  allowLoad?: boolean;
  /** `--plugin <manifest>` (repeatable), loaded at start. */
  manifests?: string[];
  budget?: Budget;
}

/** Plugins and adapters. */
export class PluginHost {
  readonly registry: PluginRegistry;
  readonly adapters: Adapters;
  readonly allowLoad: boolean;

  constructor(sessions: Sessions, pool: PanePool, opts: PluginOptions = {}) {
    this.registry = new PluginRegistry(opts.budget ?? DEFAULT_BUDGET);
    this.adapters = new Adapters(this.registry, sessions, pool);
    this.allowLoad = opts.allowLoad ?? false;
  }

  /** Loads the `--plugin` manifests; the first failure is thrown with its file. */
  async loadStartup(manifests: string[]): Promise<void> {
    for (const m of manifests) await this.registry.load(m);
  }

  /** What `ls` shows of a session pane's adapter: its id, plugin and last classified state. */
  describeSurface(session: string | undefined): Record<string, unknown> | undefined {
    const a = session ? this.adapters.bySession(session) : undefined;
    if (!a) return undefined;
    return { adapter: a.id, adapter_plugin: a.plugin, adapter_state: a.lastState?.state ?? null };
  }

  async dispose(): Promise<void> {
    await this.adapters.closeAll();
    this.registry.close();
  }
}
