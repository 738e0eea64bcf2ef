/**
 * Restore as a host service: at start the last host's journal is moved
 * aside (it waits there to be restored: at once with `restore` "on" or
 * `serve --restore`, else on `paneflow restore`), and a {@link Recorder}
 * journals this host from then on. `plan` says what would come back, per
 * pane; `run` brings workspaces back without any client attached: the same
 * titles, names, layout, cwds, agents resumed, history above a marker line.
 * docs/restore.md.
 *
 * @module
 */
import type { Layout, LayoutPreset } from "../core/layout.ts";
import type { Journal, JournalWorkspace, PanePlan, WorkspacePlan } from "../spec/restore.ts";
import { type JournalPaths, journalPaths, readJournal, writeDurable } from "./journal.ts";
import { type PaneSpawn, planPane, type Probe } from "./plan.ts";
import { RpcError } from "../errors.ts";
import { ErrorCode } from "../spec/codes.ts";
import { machine } from "./probe.ts";
import { type RecordedSurface, type RecordedWorkspace, Recorder, type RecorderHost } from "./recorder.ts";

/** What a new pane is given (src/core/registry.ts's PaneOptions, the part restore uses). */
export interface RestoredPaneOptions {
  cwd: string;
  argv: string[];
  shownArgv: string[];
  env: Record<string, string>;
  name?: string;
}

/** What the restore service needs of the host, beyond what the recorder reads. */
export interface RestoreHost extends RecorderHost {
  shell: string;
  createWorkspace(
    opts: RestoredPaneOptions & {
      title: string;
      layout: LayoutPreset;
      cols: number;
      rows: number;
      activate: false;
    },
  ): Promise<{ workspace: RecordedWorkspace; surface: RecordedSurface }>;
  addPane(ws: RecordedWorkspace, opts: RestoredPaneOptions): Promise<RecordedSurface>;
  setLayout(ws: RecordedWorkspace, layout: Layout): Promise<void>;
  focus(surfaceId: number): void;
  /** The restored pane takes over the `up` origin of the pane it replaces. */
  adoptUpOrigin(
    surfaceId: number,
    origin: NonNullable<Journal["workspaces"][number]["panes"][number]["up"]>,
  ): void;
  select(ws: RecordedWorkspace): void;
}

/** The result of `restore.plan` and `restore.run`. */
export interface RestoreReport {
  journal: string | null;
  written_at: number | null;
  problem: string | null;
  workspaces: WorkspacePlan[];
}

/** What was restored into a pane (shown by `surface.list` and reads as `restored`). */
export interface RestoredMark {
  history_lines: number;
  marker: string;
  how: PanePlan["how"];
  note: string | null;
}

/**
 * Prints the history (if any), the marker and the note, then runs the
 * program; with a shell to continue in, runs the program and then the shell.
 */
const WRAPPER = [
  "h=$1 m=$2 n=$3 then=$4; shift 4",
  'if [ -n "$h" ] && [ -r "$h" ]; then cat -- "$h"; fi',
  'if [ -n "$m" ]; then printf "%s\\n" "$m"; fi',
  'if [ -n "$n" ]; then printf "%s\\n" "$n"; fi',
  'if [ -n "$then" ]; then "$@"; exec "$then"; fi',
  'exec "$@"',
].join("\n");

/** The marker line between the restored history and what the pane shows since. */
export function markerLine(lines: number, at: number): string {
  const when = new Date(at).toISOString().slice(0, 16).replace("T", " ");
  return `──── paneflow: restored; ${lines} line${
    lines === 1 ? "" : "s"
  } of history from ${when} UTC above ────`;
}

/** The restore service of one host. */
export class Restorer {
  readonly paths: JournalPaths;
  #recorder: Recorder | null = null;
  #pending: Journal | null = null;
  #problem: string | null = null;
  #marks = new Map<number, RestoredMark>();
  #running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly _host: RestoreHost,
    private readonly _opts: {
      socketPath: string;
      mode: "off" | "ask" | "on";
      historyLines: number;
      probe?: Probe;
    },
  ) {
    this.paths = journalPaths(_opts.socketPath);
  }

  /** Moves the last host's journal aside, starts journaling, and restores with mode "on". */
  async start(): Promise<void> {
    const { paths } = this;
    const live = await readJournal(paths.live);
    if (live.problem) this._host.log(`restore: ${live.problem}`);
    if (live.journal && live.journal.workspaces.length) {
      await Deno.remove(paths.previousHistory, { recursive: true }).catch(() => {});
      await Deno.rename(paths.history, paths.previousHistory).catch(() => {});
      await Deno.rename(paths.live, paths.previous);
    }
    const previous = await readJournal(paths.previous);
    this.#pending = previous.journal;
    this.#problem = live.problem ?? previous.problem;
    if (previous.problem) this._host.log(`restore: ${previous.problem}`);
    if (this.#pending?.workspaces.length) {
      const panes = this.#pending.workspaces.reduce((n, w) => n + w.panes.length, 0);
      this._host.log(
        `restore: the last host's journal holds ${this.#pending.workspaces.length} workspace(s), ${panes} pane(s)${
          this._opts.mode === "on" ? "; restoring" : "; `paneflow restore` brings them back"
        }`,
      );
    }
    if (this._opts.mode !== "off") {
      this.#recorder = new Recorder(this._host, paths, {
        historyLines: this._opts.historyLines,
        socketPath: this._opts.socketPath,
      });
    }
    if (this._opts.mode === "on" && this.#pending?.workspaces.length) {
      const report = await this.run([]);
      for (const ws of report.workspaces) {
        for (const p of ws.panes) {
          if (p.problem) this._host.log(`restore: pane ${p.name ?? p.was_surface_id}: ${p.problem}`);
        }
        if (ws.skipped) this._host.log(`restore: workspace "${ws.title}": ${ws.skipped}`);
      }
    }
  }

  /** A bus event: the journal may need writing. */
  onEvent(type: string): void {
    this.#recorder?.onEvent(type);
  }

  /** Writes the last journal (with every pane's history); called before a clean stop closes the panes. */
  async dispose(): Promise<void> {
    await this.#running.catch(() => {});
    await this.#recorder?.stop();
  }

  /** What was restored into pane `id`, if anything. */
  markOf(id: number): RestoredMark | undefined {
    return this.#marks.get(id);
  }

  /** What `run(selection)` would do. */
  plan(selection: string[]): RestoreReport {
    const journal = this.#pending;
    return {
      journal: journal ? this.paths.previous : null,
      written_at: journal?.written_at ?? null,
      problem: this.#problem,
      workspaces: this.#select(selection).map((ws) => ({
        id: ws.id,
        title: ws.title,
        panes: ws.panes.map((p) => this.#planPane(p).plan),
        skipped: this.#skipReason(ws),
      })),
    };
  }

  /** Brings the selected workspaces (default: all) back; one restore at a time. */
  run(selection: string[]): Promise<RestoreReport> {
    const job = this.#running.catch(() => {}).then(() => this.#run(selection));
    this.#running = job;
    return job;
  }

  #planPane(p: Journal["workspaces"][number]["panes"][number]): PaneSpawn {
    return planPane(p, {
      shell: this._host.shell,
      probe: this._opts.probe ?? machine,
      historyLines: p.history ? this.#historyLength(p.history) : 0,
    });
  }

  #historyLength(file: string): number {
    try {
      const text = Deno.readTextFileSync(`${this.paths.previousHistory}/${file}`);
      return text ? text.split("\n").length - 1 : 0;
    } catch {
      return 0;
    }
  }

  #select(selection: string[]): JournalWorkspace[] {
    const all = this.#pending?.workspaces ?? [];
    if (!selection.length) return all;
    const unknown = selection.filter((s) => !all.some((w) => w.title === s || w.id === s));
    if (unknown.length) {
      const have = all.map((w) => `"${w.title}"`).join(", ") || "none";
      throw new RpcError(
        ErrorCode.InvalidParams,
        `No workspace ${unknown.map((u) => `"${u}"`).join(", ")} in the journal (it holds: ${have})`,
      );
    }
    return all.filter((w) => selection.includes(w.title) || selection.includes(w.id));
  }

  #skipReason(ws: JournalWorkspace): string | null {
    if (!ws.panes.length) return "it has no panes";
    if (this._host.workspaces().some((w) => w.title === ws.title)) {
      return `a workspace titled "${ws.title}" is already open`;
    }
    return null;
  }

  async #run(selection: string[]): Promise<RestoreReport> {
    const report = this.plan(selection);
    const journal = this.#pending;
    if (!journal) return report;
    const chosen = this.#select(selection);
    const done = new Set<string>();
    let activate: RecordedWorkspace | null = null;
    for (const [i, ws] of chosen.entries()) {
      const out = report.workspaces[i];
      if (out.skipped) continue;
      const made = await this.#restoreWorkspace(ws, out, journal.written_at);
      if (made && ws.active) activate = made;
      done.add(ws.id);
    }
    if (activate) this._host.select(activate);
    // What came back leaves the waiting journal; the rest waits for the next `restore`.
    journal.workspaces = journal.workspaces.filter((w) => !done.has(w.id));
    if (journal.workspaces.length) {
      await writeDurable(this.paths.previous, JSON.stringify(journal));
    } else {
      this.#pending = null;
      await Deno.remove(this.paths.previous).catch(() => {});
    }
    this.#recorder?.schedule(0);
    return report;
  }

  async #restoreWorkspace(
    ws: JournalWorkspace,
    out: WorkspacePlan,
    writtenAt: number,
  ): Promise<RecordedWorkspace | null> {
    const ids = new Map<number, number>();
    let made: RecordedWorkspace | null = null;
    for (const [i, pane] of ws.panes.entries()) {
      const spawn = this.#planPane(pane);
      const plan = out.panes[i];
      const history = pane.history ? `${this.paths.previousHistory}/${pane.history}` : "";
      const lines = plan.history_lines;
      const marker = lines ? markerLine(lines, writtenAt) : "";
      const opts: RestoredPaneOptions = {
        cwd: spawn.plan.cwd,
        argv: [
          "/bin/sh",
          "-c",
          WRAPPER,
          "paneflow-restore",
          lines ? history : "",
          marker,
          plan.note ?? "",
          spawn.then ?? "",
          ...spawn.argv,
        ],
        shownArgv: spawn.then ? [spawn.then] : spawn.argv,
        env: spawn.env,
        ...(pane.name ? { name: pane.name } : {}),
      };
      let surface: RecordedSurface;
      try {
        surface = await this.#spawn(ws, made, opts);
      } catch (e) {
        // A name taken by a pane of this host: the pane comes back without it.
        if (!opts.name) throw e;
        plan.problem = `${(e as Error).message}; restored without its name`;
        delete opts.name;
        surface = await this.#spawn(ws, made, opts);
      }
      made ??= surface.workspace;
      if (pane.up) this._host.adoptUpOrigin(surface.id, pane.up);
      ids.set(pane.surface_id, surface.id);
      plan.surface_id = surface.id;
      this.#marks.set(surface.id, { history_lines: lines, marker, how: plan.how, note: plan.note });
    }
    if (!made) return null;
    if (ws.layout && !ws.preset) {
      const tree = remap(ws.layout, ids);
      if (tree) await this._host.setLayout(made, tree).catch(() => {});
    }
    const focused = ws.focused === null ? undefined : ids.get(ws.focused);
    if (focused !== undefined) made.focused = focused;
    return made;
  }

  #spawn(ws: JournalWorkspace, made: RecordedWorkspace | null, opts: RestoredPaneOptions) {
    if (made) return this._host.addPane(made, opts);
    return this._host.createWorkspace({
      ...opts,
      title: ws.title,
      layout: ws.preset ?? "even_h",
      cols: ws.cols,
      rows: ws.rows,
      activate: false,
    }).then((r) => r.surface);
  }
}

/** The layout with its leaves' old ids replaced; null when a pane did not come back. */
function remap(layout: Layout, ids: Map<number, number>): Layout | null {
  if ("surface_id" in layout) {
    const id = ids.get(layout.surface_id);
    return id === undefined ? null : { surface_id: id };
  }
  const children = layout.children.map((c) => remap(c, ids));
  if (children.some((c) => c === null)) return null;
  return { ...layout, children: children as Layout[] };
}
