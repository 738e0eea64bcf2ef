/**
 * What the registry keeps of a pane and a workspace, and a pane's record
 * before its program starts (./registry.ts keeps them).
 *
 * @module
 */
import type { EngineKind } from "../spec/config.ts";
import { ErrorCode } from "../spec/codes.ts";
import { RpcError } from "../errors.ts";
import type { Layout, LayoutPreset } from "./layout.ts";
import type { SessionSpawn } from "./session/worker_api.ts";
import type { CapsGrant } from "../spec/caps.ts";

/** A pane. */
export interface Surface {
  id: number;
  name: string | null;
  title: string;
  workspace: Workspace;
  pid: number;
  argv: string[];
  /** The environment the pane was given at creation (without the host's and PANEFLOW_*): kept for a respawn and a restore. */
  env: Record<string, string>;
  cwd: string;
  cols: number;
  rows: number;
  generation: number;
  bytesIn: number;
  exit: { exit_code: number; signal: number } | null;
  createdAt: number;
  lastOutputAt: number;
  /** Resolves once the pane's program has exited and its output is parsed. */
  exited: Promise<void>;
  /** `surface_created` has been published; until then output and exit events wait. */
  announced: boolean;
  markExited: () => void;
  /** The secret its `ai-hook` frames carry (../isolation/hook_token.ts). */
  token: string;
  /** The ptywright session id when `session.create` made this pane (src/session/). */
  session?: string;
  /** Its own capability grant over the config's defaults (src/caps/). */
  caps?: CapsGrant;
  /** After a restore, run the command again (src/restore/). */
  restart?: boolean;
}

/** A workspace. */
export interface Workspace {
  key: number;
  title: string;
  preset: LayoutPreset | null;
  layout: Layout | null;
  focused: number | null;
  cols: number;
  rows: number;
  cwd: string;
}

/** What a new pane runs and where. */
export interface PaneOptions {
  cwd?: string;
  command?: string;
  argv?: string[];
  /**
   * What the pane is said to run (`cmd`, `argv`) when its foreground cannot
   * be read, as after it exits: the program without paneflow's wrapper
   * (a `setup` script). Default: the argv it runs.
   */
  shownArgv?: string[];
  env?: Record<string, string>;
  name?: string;
  prompt?: string;
  /** After a restore, run the command again (src/restore/), not a shell with a note. */
  restart?: boolean;
  /** Run as a ptywright session (src/session/): the worker keeps a transcript. */
  session?: SessionSpawn & { id: string };
  /** Its capability grant (src/caps/); the config's defaults fill the rest. */
  caps?: CapsGrant;
  /** What parses its output (src/core/pane/engine.ts); default: the config's `terminal.engine`. */
  engine?: EngineKind;
}

/** The worker's part of a session's options (without its id). */
export function sessionSpawn({ id: _id, ...spawn }: SessionSpawn & { id: string }): SessionSpawn {
  return spawn;
}

export function invalid(message: string, reason?: string): RpcError {
  return new RpcError(ErrorCode.InvalidParams, message, reason ? { reason } : undefined);
}

/** A pane's record before its program starts. */
export function newSurface(
  ws: Workspace,
  opts: PaneOptions,
  p: { id: number; argv: string[]; cwd: string; token: string; cols: number; rows: number },
): Surface {
  let markExited = () => {};
  const exited = new Promise<void>((resolve) => (markExited = resolve));
  return {
    id: p.id,
    name: opts.name ?? null,
    title: "",
    workspace: ws,
    pid: 0,
    argv: opts.shownArgv ?? p.argv,
    env: { ...opts.env },
    cwd: p.cwd,
    cols: p.cols,
    rows: p.rows,
    generation: 0,
    bytesIn: 0,
    exit: null,
    createdAt: Date.now(),
    lastOutputAt: Date.now(),
    exited,
    markExited,
    announced: false,
    token: p.token,
    ...(opts.session ? { session: opts.session.id } : {}),
    ...(opts.caps ? { caps: opts.caps } : {}),
    ...(opts.restart ? { restart: true } : {}),
  };
}
