/**
 * The agent tracker: one state machine per pane fusing three sources, best
 * first — lifecycle hooks, the screen (which corrects a stale hook state:
 * Claude Code fires no hook on an interrupt or a refused dialog), and
 * process detection. Every state change is an event on the bus.
 *
 * @module
 */
import { type AgentState, classifyScreen, type ScreenRules, type ScreenVerdict } from "./classify.ts";
import { detectFamily } from "./detect.ts";
import { fuse, INTERRUPTED, looksIdle } from "./fuse.ts";
import { WAITING_NOTIFICATIONS } from "./hook.ts";
import type { BusEvent, EventBus } from "../core/bus.ts";
import type { PanePool } from "../core/pane/pool.ts";
import { foreground, type ProcessInfo } from "../core/pane/proc.ts";
import type { ProcScanner } from "../core/pane/proc_scan.ts";
import type { Registry, Surface } from "../core/registry.ts";
import {
  type Agent,
  agentProcess,
  EXIT_GRACE_MS,
  type HookFrame,
  newAgent,
  type PromptListener,
  SCAN_MS,
  SCREEN_DEBOUNCE_MS,
  SCREENS,
  showsHookedTurn,
  SIGNAL_EXITS,
} from "./agent.ts";

export type { HookFrame } from "./agent.ts";

/** Tracks the agents of every pane. */
export class AgentTracker {
  #agents = new Map<number, Agent>();
  #screenTimers = new Map<number, ReturnType<typeof setTimeout>>();
  #scanTimer: ReturnType<typeof setInterval>;
  #promptListeners = new Set<PromptListener>();
  #scanning = false;

  /** `procs` does process detection's /proc reads (in a worker); the host owns and closes it. */
  constructor(
    private readonly _registry: Registry,
    private readonly _pool: PanePool,
    private readonly _bus: EventBus,
    private readonly _stallMs: number,
    private readonly _procs: ProcScanner,
  ) {
    _bus.tap((ev) => this.#onEvent(ev));
    this.#scanTimer = setInterval(() => void this.scan().catch(() => {}), SCAN_MS);
  }

  /** Stops the timers. */
  dispose(): void {
    clearInterval(this.#scanTimer);
    for (const t of this.#screenTimers.values()) clearTimeout(t);
  }

  /** Calls `fn` when a UserPromptSubmit hook arrives; returns the unsubscribe function. */
  onPrompt(fn: PromptListener): () => void {
    this.#promptListeners.add(fn);
    return () => this.#promptListeners.delete(fn);
  }

  #onEvent(ev: BusEvent) {
    const id = ev.surface_id;
    if (id === undefined) return;
    switch (ev.type) {
      case "surface_changed": {
        const a = this.#agents.get(id);
        if (a) {
          // An agent whose screen paneflow reads is active when its transcript
          // changes (a spinner redrawing is not activity); others on any output.
          if (!SCREENS.get(a.tool)?.activity) this.#active(a);
          this.#scheduleScreen(id);
        }
        break;
      }
      case "surface_created": {
        const s = this._registry.surfaces.get(id);
        if (s) this.detectUntracked([s]).catch(() => {});
        break;
      }
      case "surface_exited": {
        const a = this.#agents.get(id);
        if (a) this.#exit(a, ev.exit_code as number);
        break;
      }
      case "surface_closed":
        this.#agents.delete(id);
        break;
    }
  }

  #scheduleScreen(id: number) {
    if (this.#screenTimers.has(id)) return;
    this.#screenTimers.set(
      id,
      setTimeout(() => {
        this.#screenTimers.delete(id);
        this.#classify(id).catch(() => {});
      }, SCREEN_DEBOUNCE_MS),
    );
  }

  /** Reads the visible screen and applies what it says. */
  async #classify(id: number): Promise<void> {
    const a = this.#agents.get(id);
    const s = this._registry.surfaces.get(id);
    if (!a || !s || s.exit) return;
    const rules = SCREENS.get(a.tool);
    if (!rules) return;
    const r = await this._pool.read(id, s.rows, 0);
    const verdict = classifyScreen(rules, r.lines.join("\n"));
    if (!this.#agents.has(id)) return;
    const turn = rules.regions?.(r.lines).last_turn?.[0] ?? null;
    if ((verdict?.dialog?.id ?? null) !== (a.screen?.dialog?.id ?? null)) {
      a.dialogSince = verdict?.dialog ? Date.now() : 0;
    }
    a.screen = verdict ? { ...verdict, at: Date.now(), turn } : null;
    a.idleSince = looksIdle(verdict?.rule) ? a.idleSince || Date.now() : 0;
    if (rules.activity) {
      const mark = rules.activity(r.lines);
      if (mark !== a.activityMark) {
        a.activityMark = mark;
        this.#active(a);
      }
    }
    this.#fuse(a);
  }

  /** Something meaningful happened in the pane: not idle, not stalled. */
  #active(a: Agent) {
    a.lastActivity = Date.now();
    if (a.state === "stalled") this.#set(a, "thinking", "activity resumed");
  }

  /** Process detection for one pane: a new agent, or one that went away. */
  #detect(id: number, members: ProcessInfo[] | null | undefined): void {
    const s = this._registry.surfaces.get(id);
    if (!s || s.exit) return;
    const found = agentProcess(members);
    const a = this.#agents.get(id);
    if (found && !a) {
      const agent = this.#create(id, found.family, found.pid);
      agent.seenProcess = true;
      agent.why = `process ${found.pid} (${found.argv.slice(0, 2).join(" ")}) looks like ${found.family}`;
      this.#publishState(agent, null);
      this.#scheduleScreen(id);
    } else if (a && !found && (!a.hooked || a.seenProcess)) {
      // The agent's process is gone. When it was the pane's own program the
      // pane's exit (with its code) follows within moments: give it the chance.
      a.exitTimer ??= setTimeout(() => this.#agents.get(id) === a && this.#exit(a, null), EXIT_GRACE_MS);
    } else if (a && found) {
      a.pid = found.pid;
      a.seenProcess = true;
    }
  }

  #create(id: number, tool: string, pid: number | null): Agent {
    const a = newAgent(id, tool, pid);
    this.#agents.set(id, a);
    return a;
  }

  /** Periodic work: process detection for every pane, stall detection for agents. */
  async scan(): Promise<void> {
    if (this.#scanning) return;
    this.#scanning = true;
    try {
      const live = [...this._registry.surfaces.values()].filter((s) => !s.exit);
      const members = await this._procs.members(live.map((s) => s.pid));
      for (const s of live) this.#detect(s.id, members.get(s.pid));
    } finally {
      this.#scanning = false;
    }
    const now = Date.now();
    for (const a of this.#agents.values()) {
      // A screen verdict that waited out a hook's grace period applies now, without new output.
      if (a.hooked && a.screen && (a.tool !== "claude" || a.idleSince > 0)) this.#fuse(a);
      if (a.state === "thinking" && now - a.lastActivity >= this._stallMs) {
        this.#set(
          a,
          "stalled",
          `no output or hook for ${Math.round((now - a.lastActivity) / 1000)} s in a turn`,
        );
      }
    }
  }

  /** Applies a lifecycle hook frame; returns the pane's status afterwards. */
  hook(method: string, frame: HookFrame): void {
    const id = frame.surface_id;
    const s = this._registry.surfaces.get(id);
    if (!s) return;
    const now = Date.now();
    let a = this.#agents.get(id);
    if (!a) {
      a = this.#create(id, frame.tool ?? "claude", frame.pid ?? foreground(s.pid)?.pid ?? null);
    }
    if (frame.tool) a.tool = frame.tool;
    // Codex's notify fires for its title side-thread too, under another thread id.
    if (
      frame.event === "codex-notify" && a.sessionId && frame.session_id && frame.session_id !== a.sessionId
    ) return;
    if (frame.session_id && (frame.event !== "codex-notify" || !a.sessionId)) a.sessionId = frame.session_id;
    a.hooked = true;
    a.lastActivity = now;
    a.lastHook = { method, event: frame.event ?? null, at: now, params: frame };
    const previous = a.state;
    switch (method) {
      case "ai.session_start":
        this.#hookState(a, "idle", "session started");
        a.inTurn = false;
        break;
      case "ai.prompt_submit":
        a.inTurn = a.hadTurn = true;
        a.promptAt = now;
        a.lastPrompt = frame.prompt ?? null;
        a.turnAtHook = showsHookedTurn(a) ? null : a.screen?.turn ?? null; // the turn before this prompt's
        a.message = null;
        a.activeTool = null;
        this.#hookState(a, "thinking", "prompt submitted");
        if (frame.prompt !== undefined) {
          for (const fn of this.#promptListeners) fn(id, frame.prompt);
        }
        break;
      case "ai.tool_use":
        a.inTurn = true;
        a.activeTool = frame.phase === "post" ? null : frame.tool_name ?? null;
        a.message = null;
        this.#hookState(
          a,
          "thinking",
          frame.phase === "post" ? "tool finished" : `running ${frame.tool_name ?? "a tool"}`,
        );
        break;
      case "ai.notification":
        if (WAITING_NOTIFICATIONS.has(frame.notification_type ?? "")) {
          a.message = frame.message ?? a.message;
          this.#hookState(a, "waiting_for_input", `${frame.notification_type}`);
        } else this.#idleNotification(a, frame);
        break;
      case "ai.stop":
        a.inTurn = false;
        a.activeTool = null;
        if (frame.error_type) {
          a.message = frame.message ?? frame.error_type;
          this.#hookState(a, "errored", `turn failed: ${frame.error_type}`);
        } else {
          a.lastResult = frame.last_result ?? a.lastResult;
          a.message = null;
          this.#hookState(a, "finished", "turn stopped");
        }
        break;
      case "ai.session_end":
        a.inTurn = false;
        this.#hookState(a, "idle", "session ended");
        break;
      case "ai.exit":
        this.#exit(a, frame.exit_code ?? null);
        return;
    }
    a.hookMessage = a.message;
    a.why = `hook ${frame.event ?? method}`;
    this.#fuse(a, true);
    // A hook can arrive after the screen it is about has settled (Codex draws an API error before
    // its UserPromptSubmit hook lands): read the screen again rather than wait for more output.
    if (a.tool !== "claude") this.#scheduleScreen(id);
    this._bus.publish({ type: method, ...this.status(s), previous_state: previous });
  }

  /** Qwen Code fires no Stop for an Esc, only an `idle_prompt` Notification: the turn ended without a reply. */
  #idleNotification(a: Agent, frame: HookFrame) {
    if (frame.notification_type !== "idle_prompt" || a.tool !== "qwen" || a.hookState !== "thinking") return;
    a.inTurn = false;
    a.activeTool = null;
    a.message = "Interrupted";
    this.#hookState(a, "waiting_for_input", INTERRUPTED);
  }

  #hookState(a: Agent, state: AgentState, reason: string) {
    a.hookState = state;
    a.hookReason = reason;
    a.hookAt = Date.now();
    a.reason = reason;
  }

  /**
   * Decides the state from the hook state and the screen verdict. The hook
   * wins while fresh; the screen corrects what hooks cannot report.
   */
  #fuse(a: Agent, fromHook = false) {
    const { state, reason, message, why } = fuse(a, fromHook);
    a.message = message;
    a.why = why;
    if (state !== a.state || reason !== a.reason) this.#set(a, state, reason);
  }

  #set(a: Agent, state: AgentState, reason: string) {
    const previous = a.state;
    a.reason = reason;
    if (state === previous) return;
    a.state = state;
    a.stateSince = Date.now();
    if (state === "thinking") a.lastActivity = Date.now();
    this.#publishState(a, previous);
  }

  #publishState(a: Agent, previous: AgentState | null) {
    const s = this._registry.surfaces.get(a.surfaceId);
    if (!s) return;
    this._bus.publish({ type: "agent_state", ...this.status(s), previous_state: previous, why: a.why });
  }

  #exit(a: Agent, exitCode: number | null) {
    if (a.exitTimer) clearTimeout(a.exitTimer);
    this.#agents.delete(a.surfaceId);
    const s = this._registry.surfaces.get(a.surfaceId);
    const errored = exitCode !== null && exitCode !== 0 && !SIGNAL_EXITS.has(exitCode);
    this._bus.publish({
      type: "ai.exit",
      surface_id: a.surfaceId,
      workspace: s ? this._registry.indexOf(s.workspace) : null,
      tool: a.tool,
      pid: a.pid,
      state: errored ? "errored" : "idle",
      exit_code: exitCode,
      message: errored ? `exited with code ${exitCode}` : null,
      active_tool_name: null,
    });
  }

  /** Paneflow's status object for a pane (`surface.status`, `fleet.list` items; docs/agents.md). */
  status(s: Surface) {
    const a = this.#agents.get(s.id);
    const now = Date.now();
    return {
      surface_id: s.id,
      surface_name: s.name,
      workspace: this._registry.indexOf(s.workspace),
      pid: a?.pid ?? null,
      tool: a?.tool ?? null,
      state: (a?.state ?? "idle") as AgentState,
      hooked: a?.hooked ?? false,
      reason: a ? a.reason : s.exit ? "exited" : "no_agent",
      active_tool_name: a?.activeTool ?? null,
      message: a?.message ?? null,
      last_result: a?.lastResult ?? null,
      waiting_ms: a && a.state === "waiting_for_input" ? now - a.stateSince : 0,
      // An agent's activity is its hooks and its transcript (not a spinner); a plain pane's is output.
      idle_ms: now - (a ? a.lastActivity : s.lastOutputAt),
      output_generation: s.generation,
      // The dialog on screen (its id guards surface.answer against answering another one).
      dialog_id: a?.screen?.dialog?.id ?? null,
    };
  }

  /** Every tracked agent's status. */
  fleet() {
    return [...this.#agents.keys()]
      .map((id) => this._registry.surfaces.get(id))
      .filter((s): s is Surface => s !== undefined)
      .map((s) => this.status(s));
  }

  /** Why a pane's state is what it is (`paneflow explain`). */
  async explain(s: Surface) {
    const a = this.#agents.get(s.id);
    // The agent's own process (as process detection found it: it may run under
    // a shell that leads the foreground group), else the foreground process.
    const agent = s.exit ? null : agentProcess((await this._procs.members([s.pid])).get(s.pid));
    const fg = s.exit || agent ? null : foreground(s.pid);
    const now = Date.now();
    return {
      status: this.status(s),
      process: agent ?? (fg ? { pid: fg.pid, argv: fg.argv, family: detectFamily(fg.argv) } : null),
      last_hook: a?.lastHook
        ? {
          method: a.lastHook.method,
          event: a.lastHook.event,
          age_ms: now - a.lastHook.at,
          params: a.lastHook.params,
        }
        : null,
      hook_state: a?.hookState ?? null,
      screen: a?.screen
        ? {
          rule: a.screen.rule,
          state: a.screen.state,
          message: a.screen.message,
          note: a.screen.note,
          age_ms: now - a.screen.at,
          rules_version: SCREENS.get(a.tool)?.version ?? null,
        }
        : null,
      why: a ? a.why : s.exit ? "the pane's program has exited" : "no agent process detected in this pane",
    };
  }

  /**
   * Notes a keystroke paneflow delivered: Esc or Ctrl-C during a turn is an
   * interrupt, for which Claude Code fires no hook.
   */
  noteKey(id: number, keystroke: string): void {
    const a = this.#agents.get(id);
    if (!a || !/^(esc|escape|ctrl-c|ctrl\+c|c-c)$/i.test(keystroke.trim())) return;
    a.interruptAt = Date.now();
    if (a.state === "thinking" || a.state === "stalled") a.interruptPending = true;
    this.#scheduleScreen(id);
  }

  /**
   * Runs process detection now, not at the next scan, for the live panes with
   * no agent yet: a pane just created, a submit, or a question (`status`,
   * `explain`, `ps`) moments after an agent started in the pane. `quick` looks
   * at the foreground group's leader and its children only, a few small reads
   * cheap enough for every question; otherwise the whole foreground group
   * (one /proc scan), which also finds an agent further down.
   */
  async detectUntracked(surfaces: Iterable<Surface>, quick = false): Promise<void> {
    const todo = [...surfaces].filter((s) => !s.exit && !this.#agents.has(s.id));
    if (!todo.length) return;
    const members = await this._procs.members(todo.map((s) => s.pid), quick);
    for (const s of todo) if (!this.#agents.has(s.id)) this.#detect(s.id, members.get(s.pid));
  }

  /** The tracked agent's state, or null. */
  stateOf(id: number): AgentState | null {
    return this.#agents.get(id)?.state ?? null;
  }

  /** Whether the tracked agent reports through hooks. */
  hookedOf(id: number): boolean {
    const a = this.#agents.get(id);
    return !!a && a.hooked && a.hookState !== null;
  }

  /** The dialog the screen showed at its last reading, and since when; null when none. */
  dialogOf(id: number): { id: string; since: number } | null {
    const a = this.#agents.get(id);
    return a?.screen?.dialog ? { id: a.screen.dialog.id, since: a.dialogSince } : null;
  }

  /** The tracked agent's family, or null. */
  toolOf(id: number): string | null {
    return this.#agents.get(id)?.tool ?? null;
  }

  /** The agent's family, own conversation id (its hooks'; Codex: its first notify) and process, or null. */
  agentOf(id: number): { tool: string; sessionId: string | null; pid: number | null } | null {
    const a = this.#agents.get(id);
    return a ? { tool: a.tool, sessionId: a.sessionId, pid: a.pid } : null;
  }

  /** The screen rules of the pane's agent, or null. */
  rulesOf(id: number): ScreenRules | null {
    return SCREENS.get(this.toolOf(id) ?? "") ?? null;
  }

  /** Reads and classifies the pane's screen now (for the submit transaction). */
  async screenNow(id: number): Promise<{ verdict: ScreenVerdict | null; composer: string | null } | null> {
    const s = this._registry.surfaces.get(id);
    const rules = this.rulesOf(id);
    if (!s || !rules || s.exit) return null;
    const r = await this._pool.read(id, s.rows, 0);
    const verdict = classifyScreen(rules, r.lines.join("\n"));
    return { verdict, composer: rules.composer ? rules.composer(r.lines) : null };
  }
}
