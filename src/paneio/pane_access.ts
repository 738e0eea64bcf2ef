/**
 * The narrow host API PaneIO reaches panes through: find a pane by name,
 * read its rows, type into it (through the host's typist: the agent submit
 * transaction when it holds an agent), clear it, ask whether it is ready, and hear when it
 * changes. Nothing else in `src/paneio/` touches the registry, the pool or
 * the tracker.
 *
 * @module
 */
import type { BusEvent, EventBus } from "../core/bus.ts";
import type { Config } from "../spec/config.ts";
import type { AgentTracker } from "../agents/tracker.ts";
import type { PanePool } from "../core/pane/pool.ts";
import type { Registry } from "../core/registry.ts";
import type { Surface } from "../core/registry.ts";
import type { Typist } from "../typing/mod.ts";
import { PROMPT_RULES, type PromptRule, userRules } from "../spec/prompts.ts";
import { dialogShown, type Readiness, readiness } from "../agents/readiness.ts";

/** Rows of a pane from `from` (0-based, counted in the whole buffer) to its last row with content. */
export interface Rows {
  from: number;
  lines: string[];
  total: number;
}

/** What typing a text into a pane did. */
export interface Typed {
  agent: string | null;
  /** What went into the pane (a large prompt's reference to its file, not the prompt). */
  text: string;
  status: string;
  evidence: string;
}

/**
 * The parts of the host PaneIO uses (a structural slice of `HostContext`,
 * so that the context can hold PaneIO without an import circle).
 */
export interface HostParts {
  config: Config;
  registry: Registry;
  pool: PanePool;
  agents: AgentTracker;
  typing: Typist;
  log?: (line: string) => void;
}

/** The PaneIO view of one host. */
export class PaneHost {
  #listeners = new Set<(ev: BusEvent) => void>();
  /** Each pane's number of rows with content when last read (a guess for the next read's size). */
  #lengths = new Map<number, number>();
  readonly rules: PromptRule[];

  constructor(private readonly _ctx: HostParts, bus: EventBus) {
    bus.tap((ev) => {
      for (const fn of this.#listeners) fn(ev);
    });
    this.rules = [...userRules(_ctx.config.paneio.prompt_patterns), ...PROMPT_RULES];
  }

  /** Hears every host event until the returned function is called. */
  listen(fn: (ev: BusEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  log(line: string): void {
    this._ctx.log?.(line);
  }

  /** The pane with this id (throws the protocol's not-found error). */
  surface(id: number): Surface {
    return this._ctx.registry.surface(id);
  }

  /** The live pane named `name`, or null. */
  byName(name: string): Surface | null {
    for (const s of this._ctx.registry.surfaces.values()) if (s.name === name) return s;
    return null;
  }

  /** Whether the pane still exists in the registry. */
  alive(s: Surface): boolean {
    return this._ctx.registry.surfaces.get(s.id) === s && !s.exit;
  }

  /**
   * The rows from `from` to the end (at most 4000 of them, the newest); may
   * start before `from`. One read as a rule: its size is guessed from the
   * pane's last known length, and read again only when it fell short.
   */
  async rows(s: Surface, from: number): Promise<Rows> {
    const guess = this.#lengths.get(s.id) ?? from;
    let want = Math.max(64, Math.min(4000, guess - from + 64));
    let r = await this._ctx.pool.read(s.id, want, 0);
    const start = r.total_lines - r.lines.length;
    if (start > from && r.lines.length === want && want < 4000) {
      want = Math.min(4000, r.total_lines - from);
      r = await this._ctx.pool.read(s.id, want, 0);
    }
    this.#remember(s, r.total_lines);
    return { from: r.total_lines - r.lines.length, lines: r.lines, total: r.total_lines };
  }

  #remember(s: Surface, total: number) {
    if (this.#lengths.size > 10_000) this.#lengths.clear();
    this.#lengths.set(s.id, total);
  }

  /** The terminal modes of the pane that typing depends on (asked ahead, to save a round trip later). */
  async modes(s: Surface): Promise<{ bracketed_paste: boolean }> {
    return await this._ctx.pool.modes(s.id);
  }

  /** The number of rows with content (the cursor's row is the last of them or below). */
  async total(s: Surface): Promise<number> {
    return (await this._ctx.pool.read(s.id, 1, 0)).total_lines;
  }

  /** Whether the pane shows `text` anywhere in its screen or scrollback. */
  async shows(s: Surface, text: string): Promise<boolean> {
    const needle = text.split("\n").map((l) => l.trim()).find((l) => l.length > 0);
    if (!needle) return false;
    const escaped = needle.slice(0, 200).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const r = await this._ctx.pool.search(s.id, escaped, 1);
    return r.hits.length > 0;
  }

  /** Is the pane ready for input? With the pane's number of rows with content when it was asked. */
  async ready(s: Surface): Promise<Readiness & { total?: number }> {
    const { agents, pool } = this._ctx;
    if (s.exit) return readiness({ pid: s.pid, exited: true, agent: null, cursorLine: "" }, this.rules);
    await agents.detectUntracked([s], true);
    const tool = agents.toolOf(s.id);
    let agent: { tool: string; state: string; dialog: boolean } | null = null;
    if (tool) {
      const screen = await agents.screenNow(s.id);
      agent = {
        tool,
        state: agents.stateOf(s.id) ?? "unknown_running",
        dialog: dialogShown(screen?.verdict?.rule),
      };
    }
    const r = await pool.read(s.id, 1, 0);
    this.#remember(s, r.total_lines);
    const last = r.lines[0] ?? "";
    return {
      ...readiness({ pid: s.pid, exited: false, agent, cursorLine: last }, this.rules),
      total: r.total_lines,
    };
  }

  /** The agent status object of a pane (`surface.status`). */
  status(s: Surface) {
    return this._ctx.agents.status(s);
  }

  /** The agent family in the pane, or null. */
  agentOf(s: Surface): string | null {
    return this._ctx.agents.toolOf(s.id);
  }

  /** Clears the pane's scrollback and the screen above its cursor. */
  async clear(s: Surface): Promise<void> {
    await this._ctx.pool.clear(s.id);
  }

  /**
   * Types `text` as a command at a prompt (src/typing/: pasted when it spans
   * lines and the program asked for bracketed paste) and, with `submit`,
   * submits it: the agent submit transaction when the pane holds an agent,
   * else an Enter.
   */
  async type(
    s: Surface,
    text: string,
    submit = true,
    ahead?: { modes: { bracketed_paste: boolean }; detected: boolean },
  ): Promise<Typed> {
    const t = await this._ctx.typing.type(s, {
      text,
      as: "lines",
      submit,
      // The quick look (the foreground group's leader and its children): a full /proc scan per
      // message would cost a queue backlog tens of ms each. An agent deeper down is found by the
      // tracker's periodic scan, as for surface.status. (`ahead.detected`: the caller's readiness
      // check has just done it.)
      detect: ahead?.detected ? "done" : "quick",
      modes: ahead?.modes,
    });
    if (t.transaction) {
      return {
        agent: t.agent,
        text: t.typed,
        status: t.transaction.status,
        evidence: t.transaction.evidence,
      };
    }
    return {
      agent: null,
      text: t.typed,
      status: submit ? "submitted" : "typed",
      evidence: "written to the terminal",
    };
  }
}
