/**
 * What a tmux command runs with: the host's client, the model of its
 * sessions, the current pane, and the shim's small state file (options and
 * pane titles tmux keeps and paneflow has no field for).
 *
 * @module
 */
import type { Client } from "../client/client.ts";
import { dirname } from "../paths.ts";
import { buildModel, type Model, type SurfaceInfo, type TPane, type WorkspaceInfo } from "./model.ts";

/** The shim's state, kept beside the host's socket. */
export interface ShimState {
  /** Options set with set-option, by scope key ("g", "%3", "@1", "$1"). */
  options: Record<string, Record<string, string>>;
  /** Pane titles set with select-pane -T, by pane id. */
  titles: Record<string, string>;
}

/** The environment of one command. */
export interface RunContext {
  client: Client;
  socket: string;
  env: { get(k: string): string | undefined };
  out: string[];
  err: string[];
}

/** Reads the host into a model. */
export async function loadModel(client: Client): Promise<Model> {
  const ws = await client.call("workspace.list", {}) as unknown as { workspaces: WorkspaceInfo[] };
  const ps = await client.call("surface.list", {}) as unknown as { surfaces: SurfaceInfo[] };
  return buildModel(ws.workspaces, ps.surfaces);
}

/** The pane a command runs from: `TMUX_PANE` when it is on this host, else none. */
export function currentPane(m: Model, ctx: RunContext): TPane | null {
  const tp = ctx.env.get("TMUX_PANE");
  const tmux = ctx.env.get("TMUX") ?? "";
  if (!tp || !tmux.startsWith(`${ctx.socket},`)) return null;
  return m.panes.find((p) => `%${p.id}` === tp) ?? null;
}

function statePath(socket: string): string {
  return `${dirname(socket)}/tmux-state.json`;
}

/** The state file's content (empty when there is none). */
export function readState(socket: string): ShimState {
  try {
    const s = JSON.parse(Deno.readTextFileSync(statePath(socket)));
    return { options: s.options ?? {}, titles: s.titles ?? {} };
  } catch {
    return { options: {}, titles: {} };
  }
}

/** Writes the state file (atomically: a rename). */
export function writeState(socket: string, state: ShimState): void {
  const path = statePath(socket);
  const tmp = `${path}.${Deno.pid}`;
  Deno.writeTextFileSync(tmp, JSON.stringify(state), { mode: 0o600 });
  Deno.renameSync(tmp, path);
}
