/**
 * Restore on the host's core: the {@link Restorer} over the registry, the
 * agent tracker and the pane workers, seen through the narrow
 * {@link RestoreHost}. The server adds it as a service and dispatches the
 * `restore.*` methods to it. docs/restore.md.
 *
 * @module
 */
import type { EventBus } from "../core/bus.ts";
import type { PanePool } from "../core/pane/pool.ts";
import type { Registry, Workspace } from "../core/registry.ts";
import { paneShell } from "../core/pane/env.ts";
import type { Config } from "../spec/config.ts";
import { type RestoreHost, Restorer } from "./service.ts";
import { adoptUpOrigin, type UpHost, upOrigin } from "../up/apply.ts";

export { Restorer } from "./service.ts";
export { journaledDirs } from "./journal.ts";
export type { RestoredMark, RestoreReport } from "./service.ts";

/** The agent tracker's part restore reads (src/agents/tracker.ts). */
export interface AgentLookup {
  agentOf(id: number): { tool: string; sessionId: string | null; pid: number | null } | null;
}

/** Builds the host's restore service; `mode` overrides the config (`serve --restore`). */
export function restoreService(parts: {
  config: Config;
  registry: Registry;
  pool: PanePool;
  agents: AgentLookup;
  bus: EventBus;
  /** What `up` types with (src/up/apply.ts's UpHost), for the panes restore hands back to `up`. */
  typing: UpHost["typing"];
  socketPath: string;
  log: (line: string) => void;
  mode?: "off" | "ask" | "on";
}): Restorer {
  const { registry, pool, agents } = parts;
  const up: UpHost = {
    config: parts.config,
    registry,
    pool,
    typing: parts.typing,
    socketPath: parts.socketPath,
    log: parts.log,
  };
  const host: RestoreHost = {
    shell: paneShell(parts.config),
    workspaces: () => registry.workspaces,
    surface: (id) => registry.surfaces.get(id),
    activeIndex: () => registry.activeIndex,
    agent: (id) => agents.agentOf(id),
    async history(id, lines) {
      return (await pool.read(id, lines, 0)).lines;
    },
    restart: (id) => registry.surfaces.get(id)?.restart === true,
    upOrigin: (id) => upOrigin(up, id),
    adoptUpOrigin: (id, origin) => adoptUpOrigin(up, id, origin),
    log: parts.log,
    createWorkspace: (opts) => registry.createWorkspace(opts),
    addPane: (ws, opts) => registry.addPane(ws as Workspace, opts, null),
    setLayout: (ws, layout) => registry.restoreLayout(ws as Workspace, layout),
    focus: (id) => registry.focus(registry.surface(id)),
    select: (ws) => void registry.select(`w${ws.key}`),
  };
  const restorer = new Restorer(host, {
    socketPath: parts.socketPath,
    mode: parts.mode ?? parts.config.restore.mode,
    historyLines: parts.config.restore.history_lines,
  });
  parts.bus.tap((ev) => restorer.onEvent(ev.type));
  return restorer;
}
