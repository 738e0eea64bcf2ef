/**
 * ptywright sessions (docs/ptywright.md) on the host's main thread.
 *
 * A session is an ordinary pane, in a workspace of its own sized to the
 * session (so `ls --all`, `read`, `search`, `watch` and `attach` see it; its
 * pane is named after the session id and `surface.list` carries `session`),
 * run by the same pane workers with the same flow control. The worker keeps
 * what ptywright needs close to the output (src/core/session/engine.ts:
 * transcript, sequence, title, snapshots, wait evaluation); this module keeps
 * the id registry and turns calls into worker requests. A pane made by other
 * verbs is never a session: `session.*` cannot reach it.
 *
 * ## Internal API (for adapters, plugins and the handlers)
 *
 * ```ts
 * const sessions: Sessions = ctx.sessions!;
 * const s = await sessions.create({ program: "/bin/sh", args: ["-lc", "cat"], rows: 40, cols: 120 });
 * await sessions.input(s.id, { type: "text", value: "hi\n" });          // every ptywright action
 * const r = await sessions.wait(s.id, parseMatcher(tree), 5000);        // WaitResult (waitJson: text, waitRaw: wire bytes), or RpcError
 * //   -32001 timeout, -32002 closed / can no longer match, -32005 cancelled (cancel: opts.signal)
 * const snap = await sessions.snapshot(s.id);                          // unredacted ScreenSnapshot
 * const text = await sessions.transcript(s.id);                        // unredacted transcript
 * const delta = await sessions.output(s.id, cursor);                   // {text, chars, dropped, sequence}
 * const off = sessions.onChange((state) => {});                        // sequence / exit moved
 * await sessions.kill(s.id); await sessions.close(s.id);
 * sessions.owner(s.id, "e1");                                         // mark it adapter-owned
 * ```
 *
 * Redaction is the caller's (src/session/redact.ts): the handlers redact
 * snapshots, transcripts, output notifications and error messages.
 *
 * @module
 */
import { RpcError } from "../errors.ts";
import { ErrorReason } from "../spec/codes.ts";
import { type Action, PW_KEYS, PW_SIGNALS, PwError, PwLimits, PwMessage } from "../spec/ptywright.ts";
import type { PanePool } from "../core/pane/pool.ts";
import type { SessionCall, SessionResults } from "../core/session/worker_api.ts";
import type { Registry, Surface } from "../core/registry.ts";
import type { WorkerEvent } from "../core/pane/worker_api.ts";
import type { OutputDelta, ScreenSnapshot, WaitOutcome, WaitResult } from "../core/session/worker_api.ts";
import { RawJson } from "../wire/raw_json.ts";
import type { Matcher } from "../core/session/matcher.ts";
import type { Entry, Typist } from "../typing/mod.ts";

export type { Matcher } from "../core/session/matcher.ts";
export { parseMatcher } from "../core/session/matcher.ts";
export type { OutputDelta, ScreenSnapshot, WaitResult } from "../core/session/worker_api.ts";

/** What `session.create` takes (ptywright's params). */
export interface CreateOptions {
  program: string;
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  rows?: number;
  cols?: number;
  pixel_width?: number;
  pixel_height?: number;
  transcript_max_chars?: number;
  raw_transcript_path?: string;
  raw_transcript_append?: boolean;
}

/** One session as the main thread knows it. */
export interface SessionState {
  id: string;
  surface: Surface;
  /** The newest sequence and transcript length the worker reported. */
  sequence: number;
  chars: number;
  exited: boolean;
  /** `session.kill` (or a `kill` action) was called: writes are refused. */
  killed: boolean;
  /** The adapter that owns it (plugins), if any. */
  adapter: string | null;
  pixel_width: number;
  pixel_height: number;
  createdAt: number;
}

const closed = () => new RpcError(PwError.Closed, PwMessage.Closed);

/** The session registry of one host, shared by every connection. */
export class Sessions {
  #next = 1;
  #wid = 0;
  #byId = new Map<string, SessionState>();
  #bySurface = new Map<number, SessionState>();
  #listeners = new Set<(s: SessionState) => void>();
  /**
   * Reports for a session pane that arrived before `create` registered it
   * (the program printed while the host was still setting the pane up):
   * applied at registration, or the notification cursors would be seeded
   * before output a client has already seen.
   */
  #early = new Map<number, { sequence: number; chars: number; exited: boolean }>();

  /** `_typist` writes the input actions' bytes (src/typing/: the one way into a pane). */
  constructor(
    private readonly _registry: Registry,
    private readonly _pool: PanePool,
    private readonly _typist: Pick<Typist, "write">,
  ) {
    // A session pane closed by another verb (`paneflow close`) is gone as a session too.
    _registry.closeListeners.add((panes) => {
      for (const p of panes) {
        this.#early.delete(p.id);
        const s = this.#bySurface.get(p.id);
        if (s) this.#forget(s);
      }
    });
  }

  /** Applies a pane worker's report (call for every worker event). */
  onWorkerEvent(ev: WorkerEvent): void {
    const s = this.#bySurface.get(ev.id);
    if (!s) {
      // Only session panes report `session`; one not registered yet is being created.
      if (ev.ev === "session") {
        this.#early.set(ev.id, { sequence: ev.sequence, chars: ev.chars, exited: ev.exited });
      }
      return;
    }
    if (ev.ev === "session") {
      s.sequence = Math.max(s.sequence, ev.sequence);
      s.chars = Math.max(s.chars, ev.chars);
      s.exited ||= ev.exited;
    } else if (ev.ev === "exit") {
      s.exited = true;
    } else {
      return;
    }
    for (const fn of this.#listeners) fn(s);
  }

  /** Calls `fn` when a session's sequence, transcript or exit moves; returns the unsubscribe. */
  onChange(fn: (s: SessionState) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  /**
   * {@link onChange} for a client that watches output live (a connection
   * with notifications on): while it does, the pane workers keep headroom
   * for output that is watched (`PanePool.watch`).
   */
  watchOutput(fn: (s: SessionState) => void): () => void {
    const off = this.onChange(fn);
    const unwatch = this._pool.watch();
    return () => {
      off();
      unwatch();
    };
  }

  /** The session `id`, or -32602 `unknown session: id`. */
  get(id: string): SessionState {
    const s = this.#byId.get(id);
    if (!s) throw new RpcError(PwError.InvalidParams, `unknown session: ${id}`);
    return s;
  }

  /** The session of a pane, if it is one. */
  bySurface(surfaceId: number): SessionState | undefined {
    return this.#bySurface.get(surfaceId);
  }

  /** Every session id, sorted as strings (as ptywright does). */
  list(): string[] {
    return [...this.#byId.keys()].sort();
  }

  /** Every session (for notifications). */
  all(): SessionState[] {
    return [...this.#byId.values()];
  }

  /** Marks a session as owned by an adapter (the plugins issue). */
  owner(id: string, adapter: string | null): void {
    this.get(id).adapter = adapter;
  }

  /** Spawns a program in a new session pane. */
  async create(o: CreateOptions): Promise<SessionState> {
    if (o.raw_transcript_append && !o.raw_transcript_path) {
      throw new RpcError(PwError.InvalidParams, "raw_transcript_append requires raw_transcript_path");
    }
    const rows = o.rows ?? PwLimits.rows;
    const cols = o.cols ?? PwLimits.cols;
    // node-pty forks before it execs: a program that cannot run would "start" and exit 1.
    if (!findProgram(o.program, o.env?.PATH ?? Deno.env.get("PATH") ?? "", o.cwd)) {
      throw new RpcError(PwError.Internal, `cannot start \`${o.program}\`: no such executable file`);
    }
    if (o.raw_transcript_path) await openRaw(o.raw_transcript_path, o.raw_transcript_append ?? false);
    const id = `s${this.#next++}`;
    const nameFree = ![...this._registry.surfaces.values()].some((p) => p.name === id);
    const { surface } = await this._registry.createWorkspace({
      argv: [o.program, ...(o.args ?? [])],
      cwd: o.cwd,
      env: o.env,
      title: `session ${id}`,
      ...(nameFree ? { name: id } : {}),
      cols,
      rows,
      activate: false,
      session: {
        id,
        transcript_max_chars: o.transcript_max_chars ?? PwLimits.transcriptMaxChars,
        raw_path: o.raw_transcript_path ?? null,
        pixel_width: o.pixel_width ?? 0,
        pixel_height: o.pixel_height ?? 0,
      },
    });
    const early = this.#early.get(surface.id);
    this.#early.delete(surface.id);
    const s: SessionState = {
      id,
      surface,
      sequence: early?.sequence ?? 0,
      chars: early?.chars ?? 0,
      exited: surface.exit !== null || (early?.exited ?? false),
      killed: false,
      adapter: null,
      pixel_width: o.pixel_width ?? 0,
      pixel_height: o.pixel_height ?? 0,
      createdAt: Date.now(),
    };
    this.#byId.set(id, s);
    this.#bySurface.set(surface.id, s);
    return s;
  }

  /** Applies one input action; -32002 once the program is gone (except for resize and kill). */
  async input(id: string, action: Action): Promise<void> {
    const s = this.get(id);
    const payload = action.type === "stream_text"
      ? action.value.text
      : "value" in action && typeof action.value === "string"
      ? action.value
      : "";
    const bytes = payload.length > PwLimits.inputMaxBytes / 3 ? new TextEncoder().encode(payload).length : 0;
    if (bytes > PwLimits.inputMaxBytes) {
      throw new RpcError(
        PwError.InvalidParams,
        `action value is ${bytes} bytes; the limit is ${PwLimits.inputMaxBytes}`,
      );
    }
    switch (action.type) {
      case "resize":
        return this.resize(id, action.value.rows, action.value.cols, action.value);
      case "kill":
        return this.kill(id);
      case "signal": {
        const sig = PW_SIGNALS[action.value];
        if (!sig) {
          throw new RpcError(
            PwError.InvalidParams,
            `unknown signal \`${action.value}\`; expected one of ${Object.keys(PW_SIGNALS).join(", ")}`,
          );
        }
        if (s.killed || s.exited) throw closed();
        await this._pool.kill(s.surface.id, sig);
        return;
      }
      case "stream_text": {
        const chunk = Math.min(1024, Math.max(1, action.value.chunk_chars ?? 64));
        const delay = Math.min(100, action.value.delay_ms ?? 2);
        const chars = [...action.value.text];
        for (let i = 0; i < chars.length; i += chunk) {
          if (i) await new Promise((r) => setTimeout(r, delay));
          await this.#write(s, chars.slice(i, i + chunk).join(""));
        }
        return;
      }
    }
    const typed = actionInput(action);
    await this.#write(s, typed.text, typed.as);
  }

  async #write(s: SessionState, data: string, as: Entry = "keys") {
    if (s.killed || s.exited || !this.#byId.has(s.id)) throw closed();
    if (!data && as === "keys") return;
    try {
      await this._typist.write(s.surface, data, as);
    } catch (e) {
      if (e instanceof RpcError && e.data?.reason === ErrorReason.Exited) throw closed();
      throw new RpcError(PwError.Internal, (e as Error).message, undefined, { cause: e });
    }
  }

  /** Resizes the terminal (the sequence moves even when the size does not change). */
  async resize(
    id: string,
    rows: number,
    cols: number,
    pixels: { pixel_width?: number; pixel_height?: number } = {},
  ): Promise<void> {
    const s = this.get(id);
    s.pixel_width = pixels.pixel_width ?? 0;
    s.pixel_height = pixels.pixel_height ?? 0;
    await this._pool.session(s.surface.id, { kind: "pixels", width: s.pixel_width, height: s.pixel_height });
    const same = s.surface.cols === cols && s.surface.rows === rows;
    await this._registry.resizeWorkspace(s.surface.workspace, cols, rows);
    if (same) await this._pool.resize(s.surface.id, cols, rows);
  }

  /** Kills the program (SIGKILL); the session stays readable. */
  async kill(id: string): Promise<void> {
    const s = this.get(id);
    s.killed = true;
    if (!s.exited) await this._pool.kill(s.surface.id, "SIGKILL").catch(() => {});
  }

  /** Kills the program and forgets the session (its pane closes). */
  async close(id: string): Promise<void> {
    const s = this.get(id);
    this.#forget(s);
    await this._registry.closeSurface(s.surface);
  }

  #forget(s: SessionState) {
    if (this.#byId.get(s.id) !== s) return;
    this.#byId.delete(s.id);
    this.#bySurface.delete(s.surface.id);
    for (const fn of this.#listeners) fn(s);
  }

  /** Whether `id` is still registered. */
  has(id: string): boolean {
    return this.#byId.has(id);
  }

  /** The parsed screen, unredacted. */
  async snapshot(id: string): Promise<ScreenSnapshot> {
    return JSON.parse(await this.snapshotJson(id));
  }

  /** The parsed screen as JSON text, unredacted (as the worker wrote it). */
  async snapshotJson(id: string): Promise<string> {
    return (await this.snapshotRaw(id)).text;
  }

  /** The parsed screen as the worker encoded it, unredacted (to go on the wire as is). */
  async snapshotRaw(id: string): Promise<RawJson<ScreenSnapshot>> {
    const s = this.get(id);
    return new RawJson(await this.#ask(id, { kind: "snapshot" }), (b) => this._pool.recycle(s.surface.id, b));
  }

  /** The retained transcript, unredacted. */
  async transcript(id: string): Promise<string> {
    return (await this.#ask(id, { kind: "transcript" })).text;
  }

  /** The transcript written after `since` characters. */
  output(id: string, since: number): Promise<OutputDelta> {
    return this.#ask(id, { kind: "output", since });
  }

  async #ask<C extends SessionCall>(id: string, call: C): Promise<SessionResults[C["kind"]]> {
    const s = this.get(id);
    try {
      return await this._pool.session(s.surface.id, call);
    } catch (e) {
      if (!this.#byId.has(id)) throw closed();
      throw new RpcError(PwError.Internal, (e as Error).message, undefined, { cause: e });
    }
  }

  /**
   * Waits for `matcher` (validated with {@link parseMatcher}). Ends with the
   * result, or -32001 at the timeout, -32002 when the program exits and the
   * tree can no longer match (or the session closes), -32005 when `signal`
   * aborts.
   */
  async wait(id: string, matcher: Matcher, timeoutMs: number, signal?: AbortSignal): Promise<WaitResult> {
    return JSON.parse(await this.waitJson(id, matcher, timeoutMs, signal));
  }

  /** {@link wait}, with the result as JSON text (as the worker wrote it). */
  async waitJson(id: string, matcher: Matcher, timeoutMs: number, signal?: AbortSignal): Promise<string> {
    return (await this.waitRaw(id, matcher, timeoutMs, signal)).text;
  }

  /** {@link wait}, with the result as the worker encoded it (to go on the wire as is). */
  async waitRaw(
    id: string,
    matcher: Matcher,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<RawJson<WaitResult>> {
    const s = this.get(id);
    const wid = ++this.#wid;
    // Someone is timing this answer: its pane's worker keeps headroom while it is pending (PanePool.watch).
    const unwatch = this._pool.watch([s.surface.id]);
    const onAbort = () =>
      void this._pool.session(s.surface.id, { kind: "cancel", wid, reason: "cancelled" }).catch(() => {});
    signal?.addEventListener("abort", onAbort, { once: true });
    let outcome: WaitOutcome;
    try {
      if (signal?.aborted) throw new RpcError(PwError.Cancelled, PwMessage.Cancelled);
      outcome = await this._pool.session(s.surface.id, {
        kind: "wait",
        wid,
        matcher,
        timeout_ms: timeoutMs,
      });
    } catch (e) {
      if (e instanceof RpcError) throw e;
      if (!this.#byId.has(id)) throw closed();
      throw new RpcError(PwError.Internal, (e as Error).message, undefined, { cause: e });
    } finally {
      unwatch();
      signal?.removeEventListener("abort", onAbort);
    }
    if (outcome.ok) return new RawJson(outcome.json, (b) => this._pool.recycle(s.surface.id, b));
    if (outcome.error === "timeout") throw new RpcError(PwError.Timeout, PwMessage.Timeout);
    if (outcome.error === "cancelled") throw new RpcError(PwError.Cancelled, PwMessage.Cancelled);
    throw closed();
  }
}

/** What an action types (text-like actions and keys), and how. */
export function actionInput(action: Action): { text: string; as: Entry } {
  const keys = (text: string) => ({ text, as: "keys" as const });
  switch (action.type) {
    case "text":
    case "paste":
      return keys(action.value);
    case "bracketed_paste":
      // Framed whatever the program asked for; the text cannot end the paste early.
      return { text: action.value, as: "bracketed" };
    case "key": {
      const bytes = PW_KEYS[action.value];
      if (bytes === undefined) {
        throw new RpcError(
          PwError.InvalidParams,
          `unknown key \`${action.value.slice(0, 64)}\`; expected one of ${Object.keys(PW_KEYS).join(", ")}`,
        );
      }
      return keys(bytes);
    }
    case "interrupt":
      return keys("\x03");
    case "eof":
      return keys("\x04");
    default:
      return keys("");
  }
}

/** Whether `program` names an executable file (a path, or a name found on `path`). */
function findProgram(program: string, path: string, cwd?: string): boolean {
  const executable = (file: string) => {
    try {
      const info = Deno.statSync(file);
      return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    } catch {
      return false;
    }
  };
  if (program.includes("/")) {
    return executable(program.startsWith("/") || !cwd ? program : `${cwd}/${program}`);
  }
  return path.split(":").some((dir) => dir && executable(`${dir}/${program}`));
}

/**
 * Creates the raw transcript file, 0600, refusing an existing file unless
 * `append` (an existing file keeps its mode). The worker appends to it.
 */
async function openRaw(path: string, append: boolean): Promise<void> {
  let file: Deno.FsFile;
  try {
    file = append
      ? await Deno.open(path, { append: true, create: true, mode: 0o600 })
      : await Deno.open(path, { write: true, createNew: true, mode: 0o600 });
  } catch (e) {
    if (e instanceof Deno.errors.AlreadyExists) {
      throw new RpcError(
        PwError.Internal,
        `raw transcript ${path} already exists; refusing to overwrite it (pass raw_transcript_append: true to append)`,
        undefined,
        { cause: e },
      );
    }
    throw new RpcError(
      PwError.Internal,
      `cannot open raw transcript ${path}: ${(e as Error).message}`,
      undefined,
      { cause: e },
    );
  }
  try {
    if (!append) await Deno.chmod(path, 0o600);
  } finally {
    file.close();
  }
}
