/**
 * What every handler and service can reach: the host's lifetime objects.
 * It lives apart from dispatch so that services (`up`, and later sessions,
 * plugins, the queue) import this small module, not the dispatcher: that is
 * what ended the old `rpc.ts` ↔ `up.ts` circle.
 *
 * @module
 */
import type { Config } from "../spec/config.ts";
import type { AgentTracker } from "../agents/tracker.ts";
import type { PanePool } from "./pane_pool.ts";
import type { Registry } from "./registry.ts";
import type { ClientTable } from "./clients.ts";
import type { EventBus } from "./bus.ts";

/** What handlers can reach. */
export interface HostContext {
  config: Config;
  registry: Registry;
  pool: PanePool;
  agents: AgentTracker;
  /** The host's own environment enables `key` and `send`. */
  scripting: boolean;
  startedAt: number;
  socketPath: string;
  shutdown: () => void;
  /** The host's log (stderr or the --log file). */
  log?: (line: string) => void;
  /** The connections it serves (`system.clients`, `system.stats`). */
  clients?: ClientTable;
  /** The event bus (`system.stats`). */
  bus?: EventBus;
}

/** Whether a gated family of methods is open on this host. */
export function gateOpen(ctx: HostContext, gate: "send" | "keystroke"): boolean {
  return gate === "send" ? ctx.scripting || ctx.config.ai_unrestricted : ctx.scripting;
}
