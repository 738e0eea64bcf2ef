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
import type { PanePool } from "../core/pane/pool.ts";
import type { Registry } from "../core/registry.ts";
import type { Sessions } from "../session/mod.ts";
import type { PluginHost } from "../plugins/service.ts";
import type { PaneIO } from "../paneio/service.ts";
import type { Typist } from "../typing/mod.ts";
import type { Restorer } from "../restore/mod.ts";
import type { Connection } from "../core/connection.ts";
import type { ClientTable } from "./clients.ts";
import type { EventBus } from "../core/bus.ts";
import type { CapsService } from "../caps/service.ts";
import type { NotifyService } from "../notify/service.ts";
import type { UsageService } from "../usage/service.ts";

/** What handlers can reach. */
export interface HostContext {
  config: Config;
  registry: Registry;
  pool: PanePool;
  agents: AgentTracker;
  /** Typing, pasting and submitting into panes (src/typing/). */
  typing: Typist;
  /** The host's own environment enables `key` and `send`. */
  scripting: boolean;
  startedAt: number;
  socketPath: string;
  shutdown: () => void;
  /** The host's log (stderr or the --log file). */
  log: (line: string) => void;
  /** ptywright sessions (src/session/). */
  sessions: Sessions;
  /** Plugins and adapters (src/plugins/). */
  plugins: PluginHost;
  /** PaneIO: ask, readiness, clear, and the message queue (src/paneio/). */
  paneio: PaneIO;
  /** The journal and restore (src/restore/). */
  restore: Restorer;
  /** Open connections by id (a handler may act for another one: `cancel_wait`). */
  connections: ReadonlyMap<number, Connection>;
  /** The connections it serves (`system.clients`, `system.stats`). */
  clients: ClientTable;
  /** The event bus (`system.stats`). */
  bus: EventBus;
  /** Who each connection is and what it may do (src/caps/). */
  caps: CapsService;
  /** Notifications and reply links (src/notify/). */
  notify: NotifyService;
  /** What the agents spent (src/usage/). */
  usage: UsageService;
}

/**
 * Something that lives as long as the host: sessions, plugins, the queue,
 * the web view. `host.ts` keeps one list; services start in its order once
 * the host's context exists, see every connection as it opens (to hang
 * per-connection state on it: `conn.state(key)`, `conn.onClose(fn)`), and
 * are disposed in reverse order when the host stops, before the panes close.
 */
export interface Service {
  readonly name: string;
  start?(ctx: HostContext): void | Promise<void>;
  connected?(conn: Connection): void;
  dispose?(): void | Promise<void>;
}

/** Whether a gated family of methods is open on this host. */
export function gateOpen(ctx: HostContext, gate: "send" | "keystroke"): boolean {
  return gate === "send" ? ctx.scripting || ctx.config.ai_unrestricted : ctx.scripting;
}
