/**
 * Adapters (`adapter.*`, docs/plugins.md): a session wrapped in a plugin instance
 * that classifies its screen, turns intents into actions and says when a
 * turn is over. Ids are `eN`; the session comes from the host's shared `sN`
 * counter and is an ordinary pane (it shows in `ls`, with its adapter state).
 *
 * Every call on one adapter holds that adapter's mutex, `adapter.turn` for
 * both legs; waits can be cancelled by a client-minted `wait_id` from any
 * connection, because the cancel token is bound before the mutex is taken.
 *
 * @module
 */
import { RpcError } from "../errors.ts";
import { Action as ActionSchema, PwError, PwMessage } from "../spec/ptywright.ts";
import type { Result } from "../spec/results.ts";
import type { PanePool } from "../core/pane/pool.ts";
import type { Sessions, SessionState } from "../session/mod.ts";
import { internal, invalidParams, PluginFailure } from "./errors.ts";
import type { Manifest } from "./manifest.ts";
import { evaluate, hasStable, type Matcher, type MatchOutcome, parseMatcher } from "./matcher.ts";
import type { PluginRegistry } from "./registry.ts";
import type { PluginRuntime } from "./runtime.ts";
import {
  COMPLETED_TURN_STABLE_MS,
  pluginError,
  splitStatusBar,
  type StateSnapshot,
  toPlan,
  toState,
} from "./types.ts";

/** `transcript` after a wait, and a predicate's transcript: the last 16 Ki chars. */
const TAIL_CHARS = 16_384;
/** At most this many transcript marker labels per adapter. */
const MAX_MARKERS = 64;
/** Default `adapter.wait` timeout. */
export const DEFAULT_WAIT_MS = 120_000;
/** Fallback size when neither the caller nor the manifest gives one. */
const FALLBACK = { rows: 40, cols: 120 };

/** `adapter.start` / `adapter.resume` options. */
export interface StartOptions {
  plugin: string;
  program?: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  rows?: number;
  cols?: number;
  pixel_width?: number;
  pixel_height?: number;
}

/** A tiny FIFO mutex. */
class Mutex {
  #tail: Promise<void> = Promise.resolve();
  async run<T>(f: () => Promise<T>): Promise<T> {
    let release!: () => void;
    const prev = this.#tail;
    this.#tail = new Promise<void>((r) => (release = r));
    await prev;
    try {
      return await f();
    } finally {
      release();
    }
  }
}

/** One live adapter. */
export interface Adapter {
  id: string;
  plugin: string;
  manifest: Manifest;
  runtime: PluginRuntime;
  session: SessionState;
  lastIntent: string | null;
  markers: Record<string, number>;
  /** When the session's sequence last moved (for `screen_stable`). */
  changedAt: number;
  seenSequence: number;
  lastState: StateSnapshot | null;
  mutex: Mutex;
  closed: boolean;
}

/** What a wait loop tracks of a session: when its screen last changed, its markers. */
interface Watch {
  session: SessionState;
  seenSequence: number;
  changedAt: number;
  markers: Record<string, number>;
}

/** What a wait returns. */
export interface WaitReturn {
  state: StateSnapshot;
  matched: MatchOutcome | null;
  wait_id?: string;
}

/** The adapters of one host. */
export class Adapters {
  #next = 1;
  #byId = new Map<string, Adapter>();
  #waits = new Map<string, { adapter: string; abort: AbortController }>();
  #wakers = new Set<() => void>();
  /** Change times of plain sessions waited on with a `lua` matcher. */
  #watches = new Map<string, Watch>();

  constructor(
    readonly plugins: PluginRegistry,
    private readonly _sessions: Sessions,
    private readonly _pool: PanePool,
  ) {
    _sessions.onChange((s) => {
      const w = this.#watches.get(s.id);
      if (w && s.sequence !== w.seenSequence) {
        w.seenSequence = s.sequence;
        w.changedAt = performance.now();
      }
      if (!s.adapter) {
        if (w) { for (const wake of this.#wakers) wake(); }
        return;
      }
      const a = this.#byId.get(s.adapter);
      if (a && s.sequence !== a.seenSequence) {
        a.seenSequence = s.sequence;
        a.changedAt = performance.now();
      }
      for (const wake of this.#wakers) wake();
    });
  }

  /** The adapter `id`, or -32602 `unknown adapter: id`. */
  get(id: string): Adapter {
    const a = this.#byId.get(id);
    if (!a || a.closed) throw invalidParams(`unknown adapter: ${id}`);
    return a;
  }

  /** The adapter owning a session, if any (for `ls`). */
  bySession(sessionId: string): Adapter | undefined {
    return [...this.#byId.values()].find((a) => a.session.id === sessionId);
  }

  /** Whether a plugin has adapters bound to it. */
  hasLive(plugin: string): boolean {
    return [...this.#byId.values()].some((a) => a.plugin === plugin && !a.closed);
  }

  /** adapter.live. */
  live(): Result<"adapter.live">["adapters"] {
    return [...this.#byId.values()]
      .sort((a, b) => Number(a.id.slice(1)) - Number(b.id.slice(1)))
      .map((a) => ({
        adapter: a.id,
        plugin: a.plugin,
        session: a.session.id,
        sequence: a.session.sequence,
        finished: a.session.exited,
      }));
  }

  /** adapter.start: spawns the program in a new session and classifies its first screen. */
  async start(o: StartOptions): Promise<Result<"adapter.start">> {
    const entry = this.plugins.get(o.plugin);
    const target = entry.manifest.default_target;
    const program = o.program ?? target?.program;
    if (!program) {
      throw invalidParams(
        `no host-known default program for plugin \`${o.plugin}\`; pass \`program\` explicitly`,
      );
    }
    const args = o.args ?? (o.program === undefined ? target?.args ?? [] : []);
    const env = { ...(target?.env ?? {}), ...(o.env ?? {}), ...(target?.required_env ?? {}) };
    const rows = o.rows ?? target?.rows ?? FALLBACK.rows;
    const cols = o.cols ?? target?.cols ?? FALLBACK.cols;
    const id = `e${this.#next++}`;
    const runtime = await entry.instantiate();
    let session: SessionState;
    try {
      session = await this._sessions.create({
        program,
        args,
        cwd: o.cwd,
        env,
        rows,
        cols,
        pixel_width: o.pixel_width,
        pixel_height: o.pixel_height,
      });
    } catch (e) {
      runtime.close();
      if (e instanceof RpcError) throw e;
      throw internal(`cannot start \`${program}\`: ${(e as Error).message}`);
    }
    this._sessions.owner(session.id, id);
    const a: Adapter = {
      id,
      plugin: o.plugin,
      manifest: entry.manifest,
      runtime,
      session,
      lastIntent: null,
      markers: {},
      changedAt: performance.now(),
      seenSequence: session.sequence,
      lastState: null,
      mutex: new Mutex(),
      closed: false,
    };
    this.#byId.set(id, a);
    const state = await a.mutex.run(() => this.#classify(a, { full: true }));
    return { adapter: id, plugin: o.plugin, session: session.id, state };
  }

  /** adapter.close: kills the program and forgets the session and the adapter. */
  async close(id: string): Promise<void> {
    const a = this.get(id);
    for (const [wid, w] of this.#waits) {
      if (w.adapter === id) {
        w.abort.abort();
        this.#waits.delete(wid);
      }
    }
    await a.mutex.run(async () => {
      if (a.closed) return;
      a.closed = true;
      this.#byId.delete(id);
      a.runtime.close();
      if (this._sessions.has(a.session.id)) await this._sessions.close(a.session.id).catch(() => {});
    });
  }

  /** Runs `f` under the adapter's mutex. */
  locked<T>(id: string, f: (a: Adapter) => Promise<T>): Promise<T> {
    const a = this.get(id);
    return a.mutex.run(() => {
      if (a.closed) throw invalidParams(`unknown adapter: ${id}`);
      return f(a);
    });
  }

  /** The visible screen as lines of text (what classify and the matchers read). */
  screen(a: Adapter): Promise<string> {
    return this.#screenOf(a.session);
  }

  async #screenOf(s: SessionState): Promise<string> {
    try {
      const r = await this._pool.read(s.surface.id, s.surface.rows, 0);
      return r.lines.join("\n");
    } catch {
      return "";
    }
  }

  async #cursorOf(s: SessionState): Promise<{ row: number; col: number }> {
    try {
      const m = await this._pool.modes(s.surface.id);
      return { row: m.cursor.y, col: m.cursor.x };
    } catch {
      return { row: -1, col: -1 };
    }
  }

  #transcript(a: Adapter): Promise<string> {
    return this.#transcriptOf(a.session);
  }

  async #transcriptOf(s: SessionState): Promise<string> {
    try {
      return await this._sessions.transcript(s.id);
    } catch {
      return "";
    }
  }

  /** classify(ctx) on the adapter's instance; `plugin_error` when it fails. */
  async #classify(
    a: Adapter,
    o: { full?: boolean; stableMs?: number; tail?: string } = {},
  ): Promise<StateSnapshot> {
    const screen = await this.screen(a);
    const sequence = a.session.sequence;
    const { body, status } = splitStatusBar(screen);
    const transcript = o.tail ?? (await this.#transcript(a));
    const ctx: Record<string, unknown> = {
      screen,
      body_text: body,
      status_text: status,
      transcript,
      sequence,
      completed_turn_stable_ms: COMPLETED_TURN_STABLE_MS,
      markers: { ...a.markers },
      cursor: a.session.chars,
    };
    if (a.lastIntent !== null) ctx.last_intent = a.lastIntent;
    if (o.stableMs !== undefined) ctx.stable_ms = Math.round(o.stableMs);
    let state: StateSnapshot;
    try {
      state = toState(a.runtime.call("classify", ctx), sequence);
    } catch (e) {
      state = pluginError(e, sequence);
    }
    for (const m of state.host_marks ?? []) this.#mark(a, m.label);
    a.lastState = state;
    return state;
  }

  #mark(a: Adapter, label: string) {
    if (!(label in a.markers) && Object.keys(a.markers).length >= MAX_MARKERS) return;
    a.markers[label] = a.session.chars;
  }

  /** adapter.state. */
  state(id: string): Promise<StateSnapshot> {
    return this.locked(id, (a) => this.#classify(a, { full: true }));
  }

  /** adapter.send: runs the intent, applies its plan, re-classifies. */
  send(id: string, intent: string, params: unknown): Promise<StateSnapshot> {
    return this.locked(id, async (a) => {
      await this.#apply(a, intent, params);
      return await this.#classify(a, { full: true });
    });
  }

  async #apply(a: Adapter, intent: string, params: unknown): Promise<void> {
    let plan;
    try {
      plan = toPlan(a.runtime.call(intent, params ?? {}));
    } catch (e) {
      throw internal((e as Error).message);
    }
    for (const raw of plan.actions) {
      if (raw.type === "mark_transcript") {
        const label = (raw.value as { label?: unknown })?.label;
        if (typeof label !== "string") {
          throw internal(`lua plugin \`${a.plugin}\` failed: mark_transcript needs a label`);
        }
        this.#mark(a, label);
        continue;
      }
      const parsed = ActionSchema.safeParse(raw);
      if (!parsed.success) {
        throw internal(`lua plugin \`${a.plugin}\` failed: invalid action \`${String(raw.type)}\``);
      }
      await this._sessions.input(a.session.id, parsed.data);
    }
    // Input is a change: the screen's echo may not have been reported yet, and a
    // stability matcher must not fire on the screen from before the input.
    if (plan.actions.length) a.changedAt = performance.now();
    if (plan.last_intent !== undefined) a.lastIntent = plan.last_intent === "" ? null : plan.last_intent;
  }

  /**
   * adapter.wait: evaluates the matcher the plugin's `intent` returns until
   * it fires (-32001 at the timeout, -32002 if the program exited and the
   * tree can no longer match, -32005 when cancelled by `wait_id`).
   */
  wait(id: string, o: WaitOptions): Promise<WaitReturn> {
    return this.#withWaitId(id, o.wait_id, (signal) => this.locked(id, (a) => this.#wait(a, o, signal)));
  }

  /** adapter.turn: send then wait, one mutex hold for both. */
  turn(id: string, send: { intent: string; params?: unknown }, o: WaitOptions): Promise<WaitReturn> {
    return this.#withWaitId(id, o.wait_id, (signal) =>
      this.locked(id, async (a) => {
        await this.#apply(a, send.intent, send.params);
        return await this.#wait(a, o, signal);
      }));
  }

  async #withWaitId<T>(
    id: string,
    waitId: string | undefined,
    f: (s: AbortSignal) => Promise<T>,
  ): Promise<T> {
    this.get(id);
    const abort = new AbortController();
    if (waitId !== undefined) {
      if (this.#waits.has(waitId)) throw invalidParams(`wait_id \`${waitId}\` is already in flight`);
      this.#waits.set(waitId, { adapter: id, abort });
    }
    try {
      return await f(abort.signal);
    } finally {
      if (waitId !== undefined && this.#waits.get(waitId)?.abort === abort) this.#waits.delete(waitId);
    }
  }

  /** adapter.cancel_wait: idempotent. */
  cancelWait(waitId: string): Result<"adapter.cancel_wait"> {
    const w = this.#waits.get(waitId);
    if (!w) return { cancelled: false };
    this.#waits.delete(waitId);
    w.abort.abort();
    for (const wake of this.#wakers) wake();
    return { cancelled: true, adapter: w.adapter, wait_id: waitId };
  }

  async #wait(a: Adapter, o: WaitOptions, signal: AbortSignal): Promise<WaitReturn> {
    const intent = o.intent ?? "wait_turn_matcher";
    const params = { completed_turn_stable_ms: COMPLETED_TURN_STABLE_MS, ...(o.params ?? {}) };
    let matcher: Matcher;
    try {
      matcher = parseMatcher(a.runtime.call(intent, params));
    } catch (e) {
      throw internal(
        e instanceof PluginFailure ? e.message : `lua plugin \`${a.plugin}\` failed: ${(e as Error).message}`,
      );
    }
    const timeout = o.timeout_ms ?? DEFAULT_WAIT_MS;
    const { outcome, stableMs, tail } = await this.#match(a, () => a.closed, matcher, timeout, signal);
    const state = await this.#classify(a, {
      stableMs,
      tail: tail ?? (await this.#transcript(a)).slice(-TAIL_CHARS),
    });
    return { state, matched: outcome, ...(o.wait_id !== undefined ? { wait_id: o.wait_id } : {}) };
  }

  /**
   * `session.wait` with a `lua` matcher (the session family's worker-side
   * matchers cannot call into plugins): the same loop as adapter waits, on
   * the main thread, with ptywright's result.
   */
  async waitSession(
    id: string,
    raw: unknown,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<Result<"session.wait">> {
    let matcher: Matcher;
    try {
      matcher = parseMatcher(raw);
    } catch (e) {
      throw invalidParams(
        (e as Error).message.replace("the plugin returned an invalid matcher", "invalid matcher"),
      );
    }
    for (const p of luaPlugins(matcher)) this.plugins.get(p);
    const session = this._sessions.get(id);
    let w = this.#watches.get(id);
    if (!w || w.session !== session) {
      w = { session, seenSequence: session.sequence, changedAt: performance.now(), markers: {} };
      this.#watches.set(id, w);
    }
    const started = performance.now();
    const { tail } = await this.#match(w, () => !this._sessions.has(id), matcher, timeoutMs, signal);
    const snapshot = await this._sessions.snapshot(id);
    return {
      matched: true,
      sequence: snapshot.sequence,
      elapsed_ms: Math.round(performance.now() - started),
      snapshot,
      transcript_tail: tail ?? (await this._sessions.transcript(id)).slice(-TAIL_CHARS),
    };
  }

  /** Evaluates `matcher` until it fires; see {@link wait} for how it ends otherwise. */
  async #match(
    w: Watch,
    gone: () => boolean,
    matcher: Matcher,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<{ outcome: MatchOutcome; stableMs: number; tail: string | null }> {
    for (const p of luaPlugins(matcher)) await this.plugins.prepare(p);
    const stable = hasStable(matcher);
    const needsTranscript = usesTranscript(matcher);
    const needsCursor = usesCursor(matcher);
    const deadline = performance.now() + timeoutMs;
    const cancelled = () => new RpcError(PwError.Cancelled, PwMessage.Cancelled);
    while (true) {
      if (signal.aborted) throw cancelled();
      if (gone()) throw new RpcError(PwError.Closed, PwMessage.Closed);
      const s = w.session;
      const seqBefore = s.sequence;
      const screen = await this.#screenOf(s);
      const tail = needsTranscript ? (await this.#transcriptOf(s)).slice(-TAIL_CHARS) : "";
      if (s.sequence !== w.seenSequence) {
        w.seenSequence = s.sequence;
        w.changedAt = performance.now();
      }
      const stableMs = s.sequence === seqBefore ? performance.now() - w.changedAt : 0;
      const exited = s.exited;
      const cursor = needsCursor ? await this.#cursorOf(s) : { row: -1, col: -1 };
      const outcome = evaluate(matcher, {
        screen,
        transcript: tail,
        cursor,
        stableMs,
        exited,
        predicate: (plugin, predicate, p) =>
          this.plugins.predicate(plugin, predicate, {
            screen,
            transcript: tail,
            sequence: s.sequence,
            stable_ms: Math.round(stableMs),
            process_exited: exited,
            markers: { ...w.markers },
            cursor: s.chars,
            params: p,
          }),
      });
      if (outcome) return { outcome, stableMs, tail: needsTranscript ? tail : null };
      if (exited && !stable) throw new RpcError(PwError.Closed, PwMessage.Closed);
      const now = performance.now();
      if (now >= deadline) throw new RpcError(PwError.Timeout, PwMessage.Timeout);
      // Sleep until the screen changes, a cancel, or a tick (stability grows with time alone).
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#wakers.delete(done);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(1, Math.min(stable ? 25 : 250, deadline - now)));
        this.#wakers.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }

  /** Closes every adapter (host shutdown). */
  async closeAll(): Promise<void> {
    for (const id of [...this.#byId.keys()]) await this.close(id).catch(() => {});
  }
}

/** `adapter.wait` options. */
export interface WaitOptions {
  intent?: string;
  params?: Record<string, unknown>;
  timeout_ms?: number;
  wait_id?: string;
}

function luaPlugins(m: Matcher, out = new Set<string>()): Set<string> {
  if (m.type === "lua") out.add(m.value.plugin);
  if (m.type === "any" || m.type === "all") m.value.forEach((c) => luaPlugins(c, out));
  return out;
}

function usesTranscript(m: Matcher): boolean {
  if (m.type === "transcript_contains" || m.type === "transcript_regex" || m.type === "lua") return true;
  if (m.type === "any" || m.type === "all") return m.value.some(usesTranscript);
  return false;
}

function usesCursor(m: Matcher): boolean {
  if (m.type === "cursor_at") return true;
  if (m.type === "any" || m.type === "all") return m.value.some(usesCursor);
  return false;
}
