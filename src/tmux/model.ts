/**
 * paneflow's workspaces and panes seen as tmux sessions, windows and panes
 * (docs/tmux.md): a workspace is a window (`@N`, N its stable id `wN`); a
 * workspace titled `session:window` belongs to that session, any other title
 * is a session of one window; a session's id is its first window's (`$N`);
 * a pane is `%N`, N its surface id. Targets resolve as tmux's cmd-find does,
 * for the forms tools use. Pure.
 *
 * @module
 */
import { TmuxError } from "./args.ts";

/** What `workspace.list` says of a workspace (the fields used here). */
export interface WorkspaceInfo {
  index: number;
  id: string;
  title: string;
  active: boolean;
  surface_ids: number[];
  focused_surface_id: number | null;
  cols: number;
  rows: number;
}

/** What `surface.list` says of a pane (the fields used here). */
export interface SurfaceInfo {
  surface_id: number;
  name: string | null;
  title: string;
  cwd: string;
  argv: string[];
  pid: number;
  cols: number;
  rows: number;
  exited: boolean;
  exit_code: number | null;
}

/** A tmux session. */
export interface TSession {
  id: number;
  name: string;
  windows: TWindow[];
  attached: boolean;
}

/** A tmux window: one paneflow workspace. */
export interface TWindow {
  id: number;
  index: number;
  name: string;
  session: TSession;
  panes: TPane[];
  active: boolean;
  workspace: number;
  /** The workspace's title (`session` or `session:window`). */
  title: string;
  cols: number;
  rows: number;
}

/** A tmux pane: one paneflow pane. */
export interface TPane {
  id: number;
  index: number;
  window: TWindow;
  active: boolean;
  info: SurfaceInfo;
}

/** The host as tmux sees it. */
export interface Model {
  sessions: TSession[];
  windows: TWindow[];
  panes: TPane[];
}

/** The session and window names a workspace title stands for. */
export function splitTitle(title: string): { session: string; window: string | null } {
  const at = title.indexOf(":");
  return at < 0
    ? { session: title, window: null }
    : { session: title.slice(0, at), window: title.slice(at + 1) };
}

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

/** Builds the model from `workspace.list` and `surface.list`. */
export function buildModel(workspaces: WorkspaceInfo[], surfaces: SurfaceInfo[]): Model {
  const byId = new Map(surfaces.map((s) => [s.surface_id, s]));
  const sessions = new Map<string, TSession>();
  const model: Model = { sessions: [], windows: [], panes: [] };
  const ordered = [...workspaces].sort((a, b) => key(a) - key(b));
  for (const ws of ordered) {
    const { session: name, window } = splitTitle(ws.title);
    let session = sessions.get(name);
    if (!session) {
      session = { id: key(ws), name, windows: [], attached: false };
      sessions.set(name, session);
      model.sessions.push(session);
    }
    const w: TWindow = {
      id: key(ws),
      index: session.windows.length,
      name: window ?? "",
      session,
      panes: [],
      active: ws.active,
      workspace: ws.index,
      title: ws.title,
      cols: ws.cols,
      rows: ws.rows,
    };
    session.windows.push(w);
    model.windows.push(w);
    for (const id of ws.surface_ids) {
      const info = byId.get(id);
      if (!info) continue;
      const p: TPane = { id, index: w.panes.length, window: w, active: ws.focused_surface_id === id, info };
      w.panes.push(p);
      model.panes.push(p);
    }
    // tmux names a window after its active pane's program unless it was named.
    if (w.name === "") {
      const a = w.panes.find((p) => p.active) ?? w.panes[0];
      w.name = a ? basename(a.info.argv[0] ?? "") : "";
    }
  }
  for (const s of model.sessions) {
    if (!s.windows.some((w) => w.active)) s.windows[s.windows.length - 1].active = true;
  }
  return model;
}

function key(ws: WorkspaceInfo): number {
  return Number(ws.id.replace(/^w/, ""));
}

/** The session's current window: the active workspace if it is one of them, else its last. */
export function currentWindow(s: TSession): TWindow {
  return s.windows.find((w) => w.active) ?? s.windows[s.windows.length - 1];
}

/** A window's active pane. */
export function activePane(w: TWindow): TPane {
  return w.panes.find((p) => p.active) ?? w.panes[0];
}

function findSession(m: Model, word: string): TSession | undefined {
  if (/^\$\d+$/.test(word)) return m.sessions.find((s) => s.id === Number(word.slice(1)));
  const exact = m.sessions.find((s) => s.name === word);
  if (exact) return exact;
  const prefixed = m.sessions.filter((s) => s.name.startsWith(word));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

function findWindowIn(m: Model, s: TSession | null, word: string): TWindow | undefined {
  if (/^@\d+$/.test(word)) return m.windows.find((w) => w.id === Number(word.slice(1)));
  const pool = s ? s.windows : m.windows;
  if (/^\d+$/.test(word)) return pool.find((w) => w.index === Number(word));
  if (word === "" || word === "!" || word === "{last}") return s ? currentWindow(s) : undefined;
  if (word === "{start}" || word === "^") return pool[0];
  if (word === "{end}" || word === "$") return pool[pool.length - 1];
  const named = pool.filter((w) => w.name === word);
  return named.length === 1 ? named[0] : undefined;
}

function findPaneIn(w: TWindow, word: string): TPane | undefined {
  if (word === "") return activePane(w);
  if (/^\d+$/.test(word)) return w.panes.find((p) => p.index === Number(word));
  if (word === "{last}" || word === "!") return activePane(w);
  if (word === "{top}" || word === "{top-left}" || word === "{left}") return w.panes[0];
  if (word === "{bottom}" || word === "{bottom-right}" || word === "{right}") {
    return w.panes[w.panes.length - 1];
  }
  return undefined;
}

/** What a target names, and the pane it comes to. */
export type TargetKind = "pane" | "window" | "session";

/**
 * Resolves `-t target` as tmux 3.3a would for `kind`; `current` is the pane
 * the command runs from (`TMUX_PANE`, else the focused pane of the active
 * workspace). Throws tmux's "can't find …" errors.
 */
export function resolveTarget(
  m: Model,
  target: string | undefined,
  kind: TargetKind,
  current: TPane | null,
): TPane {
  const fail = (what: string, word = target ?? ""): never => {
    throw new TmuxError(`can't find ${what}: ${word}`);
  };
  if (target === undefined || target === "") {
    if (current) return current;
    if (m.sessions.length === 0) throw new TmuxError("no current session");
    return activePane(currentWindow(m.sessions[0]));
  }
  if (/^%\d+$/.test(target)) {
    return m.panes.find((p) => p.id === Number(target.slice(1))) ?? fail("pane");
  }
  const colon = target.indexOf(":");
  if (colon >= 0) {
    const sword = target.slice(0, colon);
    const s = sword === "" ? (current?.window.session ?? m.sessions[0]) : findSession(m, sword);
    if (!s) return fail("session", sword);
    const rest = target.slice(colon + 1);
    const dot = rest.lastIndexOf(".");
    const wword = dot >= 0 ? rest.slice(0, dot) : rest;
    const w = findWindowIn(m, s, wword) ?? fail("window", wword);
    if (dot < 0) return activePane(w);
    const pword = rest.slice(dot + 1);
    if (/^%\d+$/.test(pword)) {
      return m.panes.find((p) => p.id === Number(pword.slice(1))) ?? fail("pane", pword);
    }
    return findPaneIn(w, pword) ?? fail("pane", pword);
  }
  if (/^@\d+$/.test(target)) return activePane(findWindowIn(m, null, target) ?? fail("window"));
  if (/^\$\d+$/.test(target)) {
    const s = findSession(m, target) ?? fail("session");
    return activePane(currentWindow(s));
  }
  const here = current?.window.session ?? null;
  if (kind === "session") {
    const s = findSession(m, target) ?? fail("session");
    return activePane(currentWindow(s));
  }
  const dot = target.lastIndexOf(".");
  if (kind === "pane" && dot >= 0) {
    const w = dot === 0 ? current?.window : findWindowIn(m, here, target.slice(0, dot));
    if (!w) return fail("window", target.slice(0, dot));
    return findPaneIn(w, target.slice(dot + 1)) ?? fail("pane", target.slice(dot + 1));
  }
  if (kind === "pane" && current && /^\d+$/.test(target)) {
    const p = findPaneIn(current.window, target);
    if (p) return p;
  }
  const w = findWindowIn(m, here, target);
  if (w) return activePane(w);
  const s = findSession(m, target);
  if (s) return activePane(currentWindow(s));
  return fail(kind === "window" ? "window" : kind === "pane" ? "pane" : "session");
}
