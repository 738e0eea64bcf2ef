/**
 * The host's model: workspaces (ordered, one active, each with a layout on a
 * virtual size) and surfaces (panes: ids from 1, never reused). Panes run in
 * the {@link PanePool}; this module keeps everything else.
 *
 * @module
 */
import { ErrorCode, ErrorReason } from "../spec/codes.ts";
import type { Config } from "../spec/config.ts";
import { RpcError } from "../errors.ts";
import { nameProblem } from "../spec/workspace.ts";
import type { EventBus } from "./bus.ts";
import {
  type Layout,
  layoutLeaves,
  type LayoutPreset,
  layoutRects,
  presetLayout,
  removeFromLayout,
  splitLayout,
} from "./layout.ts";
import type { PanePool } from "./pane/pool.ts";
import type { WorkerEvent } from "./pane/worker_api.ts";
import { foreground } from "./pane/proc.ts";
import { newPaneToken, PANE_TOKEN_ENV } from "./isolation/hook_token.ts";
import { HOST_ID_ENV, newHostId } from "./isolation/reap.ts";
import { paneBaseEnv, paneShell } from "./pane/env.ts";
import {
  invalid,
  newSurface,
  type PaneOptions,
  sessionSpawn,
  type Surface,
  type Workspace,
} from "./surface.ts";

export type { PaneOptions, Surface, Workspace } from "./surface.ts";

/** Workspaces and surfaces of one host. */
export class Registry {
  readonly workspaces: Workspace[] = [];
  readonly surfaces = new Map<number, Surface>();
  /** Every pane carries it (PANEFLOW_HOST_ID): what ../isolation finds a pane's processes by. */
  readonly hostId = newHostId();
  #active = 0;
  #nextSurface = 1;
  #nextWorkspace = 1;

  constructor(
    private readonly _config: Config,
    private readonly _pool: PanePool,
    private readonly _bus: EventBus,
    private readonly _socketPath: string,
  ) {}

  /** Index of the active workspace, or -1 when there is none. */
  get activeIndex(): number {
    return this.workspaces.length ? Math.min(this.#active, this.workspaces.length - 1) : -1;
  }

  /** Index of a workspace in the ordered list. */
  indexOf(ws: Workspace): number {
    return this.workspaces.indexOf(ws);
  }

  /** The workspace at `index`, or with stable id `w<key>` (default: the active one). */
  workspaceAt(index?: number | string): Workspace {
    if (typeof index === "string") {
      const key = Number(index.slice(1));
      const ws = this.workspaces.find((w) => w.key === key);
      if (!ws) {
        throw invalid(`No workspace ${index} (closed, or never created)`, ErrorReason.WorkspaceNotFound);
      }
      return ws;
    }
    const i = index ?? this.activeIndex;
    const ws = this.workspaces[i];
    if (!ws) {
      throw invalid(
        this.workspaces.length
          ? `No workspace ${i}; indexes are 0..${this.workspaces.length - 1}`
          : "No workspace exists; create one with paneflow new",
        ErrorReason.WorkspaceNotFound,
      );
    }
    return ws;
  }

  /** The surface with this id. */
  surface(id: number): Surface {
    const s = this.surfaces.get(id);
    if (!s) throw invalid(`No pane with surface_id ${id}`, ErrorReason.SurfaceNotFound);
    return s;
  }

  /** Creates a workspace with one pane and makes it active. */
  async createWorkspace(
    opts: PaneOptions & {
      title?: string;
      layout?: LayoutPreset;
      /** The workspace's size (default: the config's terminal size). */
      cols?: number;
      rows?: number;
      /** Make it the active workspace (default true). */
      activate?: boolean;
    },
  ): Promise<{ workspace: Workspace; surface: Surface }> {
    const cwd = this.#checkCwd(opts.cwd);
    const key = this.#nextWorkspace++;
    const ws: Workspace = {
      key,
      title: opts.title ?? `workspace ${key}`,
      preset: opts.layout ?? "even_h",
      layout: null,
      focused: null,
      cols: opts.cols ?? this._config.terminal.cols,
      rows: opts.rows ?? this._config.terminal.rows,
      cwd,
    };
    const before = this.workspaces[this.activeIndex];
    this.workspaces.push(ws);
    try {
      const surface = await this.addPane(ws, { ...opts, cwd }, null);
      this.#active = this.indexOf(opts.activate === false && before ? before : ws);
      this._bus.publish({ type: "workspace_created", workspace: this.indexOf(ws), title: ws.title });
      return { workspace: ws, surface };
    } catch (e) {
      this.workspaces.splice(this.indexOf(ws), 1);
      throw e;
    }
  }

  /**
   * Adds a pane to a workspace: next to `split.target` in `split.direction`,
   * or by the workspace's preset when `split` is null.
   */
  async addPane(
    ws: Workspace,
    opts: PaneOptions,
    split: { target: number | null; direction: "h" | "v" } | null,
  ): Promise<Surface> {
    const cwd = this.#checkCwd(opts.cwd ?? ws.cwd);
    if (opts.name !== undefined) this.#checkName(opts.name, null);
    const id = this.#nextSurface++;
    const shell = paneShell(this._config);
    const argv = opts.argv ?? (opts.command ? [shell, "-c", opts.command] : [shell]);
    const token = newPaneToken();
    const previous = ws.layout;
    const rect = this.#place(ws, id, split);
    const surface = newSurface(ws, opts, { id, argv, cwd, token, ...rect });
    this.surfaces.set(id, surface);
    try {
      const { pid } = await this._pool.spawn({
        id,
        file: argv[0],
        args: argv.slice(1),
        cwd,
        env: this.#paneEnv(id, opts.env, token),
        cols: rect.cols,
        rows: rect.rows,
        scrollback: this._config.terminal.scrollback_lines,
        engine: opts.engine ?? this._config.terminal.engine,
        ...(opts.session ? { session: sessionSpawn(opts.session) } : {}),
      });
      surface.pid = pid;
    } catch (e) {
      this.surfaces.delete(id);
      ws.layout = previous;
      throw new RpcError(
        ErrorCode.InternalError,
        `Cannot start pane: ${(e as Error).message}`,
        undefined,
        { cause: e },
      );
    }
    ws.focused ??= id;
    await this.#applyLayout(ws, id);
    this.#announce(surface);
    return surface;
  }

  /**
   * Puts pane `id` into the workspace's layout (beside `split.target`, else by
   * the preset, else to the right) and returns its size there.
   */
  #place(
    ws: Workspace,
    id: number,
    split: { target: number | null; direction: "h" | "v" } | null,
  ): { cols: number; rows: number } {
    ws.layout = split
      ? splitLayout(ws.layout, split.target, id, split.direction)
      : ws.preset
      ? presetLayout(ws.preset, [...layoutLeaves(ws.layout), id])
      : splitLayout(ws.layout, null, id, "h");
    if (split) ws.preset = null;
    const rect = layoutRects(ws.layout, ws.cols, ws.rows).get(id)!;
    return { cols: rect.cols, rows: rect.rows };
  }

  /** Tells subscribers a pane exists, then what it did while it was starting. */
  #announce(surface: Surface): void {
    const id = surface.id;
    this._bus.publish({
      type: "surface_created",
      surface_id: id,
      workspace: this.indexOf(surface.workspace),
      name: surface.name,
      cmd: surface.argv.join(" "),
    });
    surface.announced = true;
    // Output (or an exit) that came while the spawn finished is published after the creation.
    if (surface.generation > 0) {
      this._bus.publish({ type: "surface_changed", surface_id: id, output_generation: surface.generation });
    }
    if (surface.exit) this.#publishExit(surface);
  }

  /**
   * A pane's environment: the base, the caller's, then what tells it where
   * it is. A pane whose `TMUX` names this host (docs/tmux.md)
   * also gets `TMUX_PANE=%<id>`, as tmux sets it, so the `tmux` shim finds its pane.
   */
  #paneEnv(id: number, given: Record<string, string> | undefined, token: string): Record<string, string> {
    const env: Record<string, string> = {
      ...paneBaseEnv(this._config),
      ...given,
      PANEFLOW_SOCKET_PATH: this._socketPath,
      PANEFLOW_SURFACE_ID: String(id),
      [PANE_TOKEN_ENV]: token,
      [HOST_ID_ENV]: this.hostId,
      TERM: "xterm-256color",
    };
    if (env.TMUX?.startsWith(`${this._socketPath},`)) env.TMUX_PANE = `%${id}`;
    return env;
  }

  /**
   * Runs a new program in a pane, as tmux's `respawn-pane -k`: the running
   * one gets SIGHUP (SIGKILL if it outlives `graceMs`), the pane keeps its
   * id, place and name. The environment is the pane's own plus `env`.
   */
  async respawn(
    s: Surface,
    opts: { command?: string; argv?: string[]; cwd?: string; env?: Record<string, string>; graceMs?: number },
  ): Promise<Surface> {
    if (!s.exit) {
      await this._pool.kill(s.id, "SIGHUP").catch(() => {});
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<"late">((r) => (timer = setTimeout(() => r("late"), opts.graceMs ?? 2000)));
      const how = await Promise.race([s.exited.then(() => "ok" as const), late]);
      clearTimeout(timer);
      if (how === "late") {
        await this._pool.kill(s.id, "SIGKILL").catch(() => {});
        await s.exited;
      }
    }
    await this._pool.dispose(s.id).catch(() => {});
    const cwd = this.#checkCwd(opts.cwd ?? s.cwd);
    const shell = paneShell(this._config);
    const argv = opts.argv ?? (opts.command ? [shell, "-c", opts.command] : [shell]);
    let markExited = () => {};
    s.exited = new Promise<void>((resolve) => (markExited = resolve));
    s.markExited = markExited;
    s.exit = null;
    s.argv = argv;
    s.cwd = cwd;
    s.generation = 0;
    const { pid } = await this._pool.spawn({
      id: s.id,
      file: argv[0],
      args: argv.slice(1),
      cwd,
      env: this.#paneEnv(s.id, { ...s.env, ...opts.env }, s.token),
      cols: s.cols,
      rows: s.rows,
      scrollback: this._config.terminal.scrollback_lines,
      engine: this._config.terminal.engine,
    });
    s.pid = pid;
    this._bus.publish({ type: "surface_changed", surface_id: s.id, output_generation: s.generation });
    return s;
  }

  /** Resizes every pane of `ws` to its rectangle (SIGWINCH on change). */
  async #applyLayout(ws: Workspace, skip?: number) {
    const rects = layoutRects(ws.layout, ws.cols, ws.rows);
    const jobs: Promise<void>[] = [];
    for (const [id, rect] of rects) {
      const s = this.surfaces.get(id);
      if (!s || id === skip) continue;
      if (s.cols === rect.cols && s.rows === rect.rows) continue;
      s.cols = rect.cols;
      s.rows = rect.rows;
      jobs.push(this._pool.resize(id, rect.cols, rect.rows).catch(() => {}));
    }
    await Promise.all(jobs);
  }

  /** Replaces a workspace's layout by a preset or a split tree of its panes. */
  async restoreLayout(ws: Workspace, layout: LayoutPreset | Layout): Promise<void> {
    const ids = layoutLeaves(ws.layout);
    if (typeof layout === "string") {
      ws.preset = layout;
      ws.layout = presetLayout(layout, ids);
    } else {
      const given = layoutLeaves(layout);
      const want = [...ids].sort((a, b) => a - b).join(",");
      if ([...given].sort((a, b) => a - b).join(",") !== want) {
        throw invalid(
          `"layout": the tree must name each pane of the workspace exactly once (${want})`,
        );
      }
      ws.preset = null;
      ws.layout = layout;
    }
    await this.#applyLayout(ws);
  }

  /** Sets a workspace's size and resizes its panes to their rectangles. */
  async resizeWorkspace(ws: Workspace, cols: number, rows: number): Promise<void> {
    ws.cols = cols;
    ws.rows = rows;
    await this.#applyLayout(ws);
  }

  /** Renames a pane; null clears the name. */
  rename(s: Surface, name: string | null): void {
    if (name !== null) this.#checkName(name, s.id);
    const previous = s.name;
    s.name = name;
    if (previous !== name) {
      this._bus.publish({ type: "surface_renamed", surface_id: s.id, name, previous_name: previous });
    }
  }

  /** Focuses a pane and activates its workspace. */
  focus(s: Surface): void {
    s.workspace.focused = s.id;
    this.#active = this.indexOf(s.workspace);
  }

  /** Makes a workspace active. */
  select(index: number | string): Workspace {
    const ws = this.workspaceAt(index);
    this.#active = this.indexOf(ws);
    return ws;
  }

  /** Closes a pane (SIGHUP to its program); an emptied workspace closes too. */
  async closeSurface(s: Surface): Promise<void> {
    if (!this.surfaces.has(s.id)) return;
    this.surfaces.delete(s.id);
    await this._pool.dispose(s.id).catch(() => {});
    s.markExited();
    const ws = s.workspace;
    ws.layout = removeFromLayout(ws.layout, s.id);
    if (ws.preset) ws.layout = presetLayout(ws.preset, layoutLeaves(ws.layout));
    if (ws.focused === s.id) ws.focused = layoutLeaves(ws.layout)[0] ?? null;
    this._bus.publish({ type: "surface_closed", surface_id: s.id, workspace: this.indexOf(ws) });
    if (!ws.layout) this.#dropWorkspace(ws);
    else await this.#applyLayout(ws);
    await this.#notifyClosed([s]);
  }

  /** Closes a workspace and every pane in it. */
  async closeWorkspace(ws: Workspace): Promise<void> {
    const closed: Surface[] = [];
    for (const id of layoutLeaves(ws.layout)) {
      const s = this.surfaces.get(id);
      if (!s) continue;
      closed.push(s);
      this.surfaces.delete(id);
      await this._pool.dispose(id).catch(() => {});
      s.markExited();
      this._bus.publish({ type: "surface_closed", surface_id: id, workspace: this.indexOf(ws) });
    }
    ws.layout = null;
    this.#dropWorkspace(ws);
    await this.#notifyClosed(closed);
  }

  /** Runs after panes are closed (e.g. managed worktree teardown); awaited, errors ignored. */
  readonly closeListeners = new Set<(closed: Surface[]) => Promise<void> | void>();

  async #notifyClosed(closed: Surface[]) {
    for (const fn of this.closeListeners) {
      try {
        await fn(closed);
      } catch { /* a listener's failure never blocks a close */ }
    }
  }

  #dropWorkspace(ws: Workspace) {
    const index = this.indexOf(ws);
    if (index < 0) return;
    this.workspaces.splice(index, 1);
    if (this.#active > index || this.#active >= this.workspaces.length) {
      this.#active = Math.max(0, this.#active - 1);
    }
    this._bus.publish({ type: "workspace_closed", workspace: index, title: ws.title });
  }

  /** Applies what a pane worker reported. */
  onWorkerEvent(ev: WorkerEvent): void {
    const s = this.surfaces.get(ev.id);
    if (!s) return;
    switch (ev.ev) {
      case "changed":
        s.generation = ev.generation;
        s.bytesIn = ev.bytes_in;
        s.lastOutputAt = Date.now();
        if (!s.announced) break;
        this._bus.publish({
          type: "surface_changed",
          surface_id: s.id,
          output_generation: ev.generation,
        });
        break;
      case "title":
        s.title = ev.title;
        break;
      case "exit":
        // Killed by a signal: report it the way a shell's $? does (128 + n), never 0.
        s.exit = { exit_code: ev.signal ? 128 + ev.signal : ev.exit_code, signal: ev.signal };
        s.markExited();
        if (s.announced) this.#publishExit(s);
        break;
    }
  }

  #publishExit(s: Surface) {
    this._bus.publish({
      type: "surface_exited",
      surface_id: s.id,
      workspace: this.indexOf(s.workspace),
      exit_code: s.exit!.exit_code,
      // null for a normal exit, as `exit_signal` in surface.list.
      signal: s.exit!.signal || null,
    });
  }

  /** The public description of a pane (`surface.list` item). */
  describe(s: Surface) {
    const fg = s.exit ? null : foreground(s.pid);
    return {
      surface_id: s.id,
      name: s.name,
      title: s.title,
      cwd: fg?.cwd ?? s.cwd,
      cmd: (fg?.argv ?? s.argv).join(" "),
      argv: fg?.argv ?? s.argv,
      workspace: this.indexOf(s.workspace),
      pid: fg?.pid ?? s.pid,
      focused: s.workspace.focused === s.id,
      cols: s.cols,
      rows: s.rows,
      output_generation: s.generation,
      exited: s.exit !== null,
      exit_code: s.exit?.exit_code ?? null,
      exit_signal: s.exit?.signal || null,
      ...(s.session ? { session: s.session } : {}),
      ...this.describeExtra?.(s),
    };
  }

  /** Fields other services add to a pane's description (plugins: its adapter and state). */
  describeExtra?: (s: Surface) => Record<string, unknown> | undefined;

  /** The public description of a workspace (`workspace.list` item). */
  describeWorkspace(ws: Workspace) {
    const index = this.indexOf(ws);
    return {
      index,
      /** Stable while the host runs: the index shifts when an earlier workspace closes. */
      id: `w${ws.key}`,
      title: ws.title,
      active: index === this.activeIndex,
      layout: ws.preset ?? "custom",
      layout_tree: ws.layout,
      surface_ids: layoutLeaves(ws.layout),
      focused_surface_id: ws.focused,
      cols: ws.cols,
      rows: ws.rows,
    };
  }

  #checkCwd(cwd: string | undefined): string {
    const dir = cwd ?? Deno.cwd();
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(dir);
    } catch {
      throw invalid(`"cwd": directory "${dir}" does not exist`);
    }
    if (!info.isDirectory) throw invalid(`"cwd": "${dir}" is not a directory`);
    return Deno.realPathSync(dir);
  }

  #checkName(name: string, self: number | null) {
    const problem = nameProblem(name);
    if (problem) {
      const clear = name.trim() === "" ? "; clear it with null (rename --clear)" : "";
      throw invalid(`"name": ${problem}${clear}`);
    }
    for (const s of this.surfaces.values()) {
      if (s.name === name && s.id !== self) {
        throw invalid(`"name": "${name}" is already used by pane ${s.id}`);
      }
    }
  }

  /** Kills every pane (SIGHUP); used at shutdown. */
  async closeAll(): Promise<void> {
    for (const ws of [...this.workspaces]) await this.closeWorkspace(ws);
  }
}
