/**
 * Keeps the journal current: after every change of the host's model (a
 * pane made, closed, renamed or exited, a workspace made or closed), after
 * output (a `cd` shows a prompt) and every few seconds (a layout change),
 * it takes a snapshot — names, argv, given env, each pane's foreground cwd
 * from /proc, its agent and the agent's own session id — and writes it when
 * it differs from the last one written. Writes are debounced, one at a time,
 * async (temp file, fsync, rename: ./journal.ts). History files are written
 * apart, per pane, when its output moved and at most every
 * {@link HISTORY_EVERY_MS}.
 *
 * @module
 */
import { type Layout, layoutLeaves, type LayoutPreset } from "../core/layout.ts";
import { foreground, readArgv, readCwd } from "../core/pane/proc.ts";
import type { Journal, JournalPane } from "../spec/restore.ts";
import { JOURNAL_VERSION } from "../spec/restore.ts";
import { type JournalPaths, writeDurable } from "./journal.ts";

/** The part of a pane the recorder reads (src/core/registry.ts's Surface). */
export interface RecordedSurface {
  id: number;
  name: string | null;
  pid: number;
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  generation: number;
  exit: { exit_code: number } | null;
  workspace: RecordedWorkspace;
}

/** The part of a workspace the recorder reads. */
export interface RecordedWorkspace {
  key: number;
  title: string;
  preset: LayoutPreset | null;
  layout: Layout | null;
  focused: number | null;
  cols: number;
  rows: number;
  cwd: string;
}

/** What the recorder needs of the host: a narrow view of the registry, the agents and the panes. */
export interface RecorderHost {
  workspaces(): readonly RecordedWorkspace[];
  surface(id: number): RecordedSurface | undefined;
  activeIndex(): number;
  /** The pane's agent: family, own session id, process id. */
  agent(id: number): { tool: string; sessionId: string | null; pid: number | null } | null;
  /** The last `lines` lines of a pane's text (scrollback and screen). */
  history(id: number, lines: number): Promise<string[]>;
  /** Panes to start again as they were (not as a shell). */
  restart(id: number): boolean;
  /** Which `up` started the pane (src/up/apply.ts), or null. */
  upOrigin(id: number): JournalPane["up"];
  log(line: string): void;
}

/** Quiet time after a change before the journal is written. */
const DEBOUNCE_MS = 200;
/** Output alone (a `cd`'s prompt) is written this long after. */
const OUTPUT_DEBOUNCE_MS = 1000;
/** A snapshot at least this often (layout changes publish no event). */
const TICK_MS = 5000;
/** A pane's history file at most this often (and at a clean stop). */
export const HISTORY_EVERY_MS = 2000;

/** What the recorder last knew of a pane, kept while its processes can no longer be read. */
interface Known {
  cwd: string;
  foreground: string[] | null;
  agent: JournalPane["agent"];
  historyGeneration: number;
  historyAt: number;
  history: string | null;
}

/** Writes one host's journal. */
export class Recorder {
  #known = new Map<number, Known>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  #due = Infinity;
  #tick: ReturnType<typeof setInterval>;
  #writing: Promise<void> | null = null;
  #again = false;
  #last = "";
  #stopped = false;
  #failed = false;

  constructor(
    private readonly _host: RecorderHost,
    private readonly _paths: JournalPaths,
    private readonly _opts: { historyLines: number; socketPath: string },
  ) {
    this.#tick = setInterval(() => this.schedule(0), TICK_MS);
  }

  /** Reacts to a bus event. */
  onEvent(type: string): void {
    if (this.#stopped) return;
    if (type === "surface_changed") this.schedule(OUTPUT_DEBOUNCE_MS);
    else if (/^(surface_|workspace_|ai\.|agent_state)/.test(type)) this.schedule(DEBOUNCE_MS);
  }

  /** Writes the journal within `ms` (an earlier schedule stands). */
  schedule(ms: number): void {
    if (this.#stopped) return;
    const at = Date.now() + ms;
    if (this.#timer !== null && this.#due <= at) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#due = at;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#due = Infinity;
      void this.flush(false);
    }, ms);
  }

  /** Takes a snapshot and writes it if it changed; one write at a time. */
  async flush(final: boolean): Promise<void> {
    if (this.#writing) {
      this.#again = true;
      await this.#writing;
      if (!this.#again) return;
    }
    this.#again = false;
    this.#writing = this.#write(final).catch((e) => {
      if (!this.#failed) this._host.log(`restore: cannot write the journal: ${(e as Error).message}`);
      this.#failed = true;
    }).finally(() => (this.#writing = null));
    await this.#writing;
  }

  /** The last snapshot, with history, written; then nothing more (a clean stop closes the panes next). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#tick);
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.flush(true);
  }

  /** Stops without a last write (the host forgets its journal: config `restore` "off"). */
  halt(): void {
    this.#stopped = true;
    clearInterval(this.#tick);
    if (this.#timer !== null) clearTimeout(this.#timer);
  }

  async #write(final: boolean): Promise<void> {
    const journal = await this.snapshot(final);
    const text = JSON.stringify(journal);
    const key = JSON.stringify({ ...journal, written_at: 0 });
    if (key === this.#last) return;
    if (final && journal.workspaces.length === 0) {
      // Nothing to bring back: no journal left behind.
      await Deno.remove(this._paths.live).catch(() => {});
      await Deno.remove(this._paths.history, { recursive: true }).catch(() => {});
      this.#last = key;
      return;
    }
    await writeDurable(this._paths.live, text);
    this.#last = key;
    this.#failed = false;
  }

  /** The journal of the host as it is now. */
  async snapshot(final = false): Promise<Journal> {
    const host = this._host;
    const live = new Set<number>();
    const active = host.activeIndex();
    const workspaces = [];
    for (const [index, ws] of host.workspaces().entries()) {
      const panes: JournalPane[] = [];
      for (const id of layoutLeaves(ws.layout)) {
        const s = host.surface(id);
        if (!s) continue;
        live.add(id);
        panes.push(await this.#pane(s, final));
      }
      workspaces.push({
        id: `w${ws.key}`,
        title: ws.title,
        active: index === active,
        preset: ws.preset,
        layout: ws.layout,
        focused: ws.focused,
        cols: ws.cols,
        rows: ws.rows,
        cwd: ws.cwd,
        panes,
      });
    }
    for (const id of [...this.#known.keys()]) {
      if (live.has(id)) continue;
      this.#known.delete(id);
      await Deno.remove(`${this._paths.history}/${id}.txt`).catch(() => {});
    }
    return {
      version: JOURNAL_VERSION,
      socket: this._opts.socketPath,
      pid: Deno.pid,
      written_at: Date.now(),
      workspaces,
    };
  }

  async #pane(s: RecordedSurface, final: boolean): Promise<JournalPane> {
    let k = this.#known.get(s.id);
    if (!k) {
      k = { cwd: s.cwd, foreground: null, agent: null, historyGeneration: -1, historyAt: 0, history: null };
      this.#known.set(s.id, k);
    }
    if (!s.exit) {
      const fg = foreground(s.pid);
      if (fg) {
        if (fg.cwd) k.cwd = fg.cwd;
        // What runs in front, when it is not the pane's own program (a `less` in a shell; an
        // `sh -c` that exec'd its command shows that command).
        k.foreground = fg.argv.join("\0") !== s.argv.join("\0") ? fg.argv : null;
      }
      const agent = this._host.agent(s.id);
      // An agent whose process is gone (quit back to its shell) is not resumed.
      const gone = agent?.pid ? readArgv(agent.pid) === null : false;
      if (gone) k.agent = null;
      if (agent && !gone) {
        const argv = (agent.pid ? readArgv(agent.pid) : null) ?? k.agent?.argv ?? fg?.argv ?? s.argv;
        const cwd = agent.pid ? readCwd(agent.pid) : null;
        if (cwd) k.cwd = cwd;
        k.agent = { tool: agent.tool, session_id: agent.sessionId ?? k.agent?.session_id ?? null, argv };
        k.foreground = null;
      }
    }
    const lines = this._opts.historyLines;
    if (lines > 0 && s.generation !== k.historyGeneration) {
      const now = Date.now();
      if (final || now - k.historyAt >= HISTORY_EVERY_MS) {
        k.historyAt = now;
        k.historyGeneration = s.generation;
        try {
          const text = await this._host.history(s.id, lines);
          while (text.length && text.at(-1)!.trim() === "") text.pop();
          const file = `${this._paths.history}/${s.id}.txt`;
          await writeDurable(file, text.length ? text.join("\n") + "\n" : "");
          k.history = text.length ? `${s.id}.txt` : null;
        } catch { /* a pane closing meanwhile */ }
      }
    }
    return {
      surface_id: s.id,
      name: s.name,
      argv: s.argv,
      env: s.env,
      cwd: k.cwd,
      foreground: k.foreground,
      agent: k.agent,
      restart: this._host.restart(s.id),
      exit_code: s.exit?.exit_code ?? null,
      history: k.history,
      up: this._host.upOrigin(s.id),
    };
  }
}
