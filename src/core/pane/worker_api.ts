/**
 * Messages between the host's main thread and its pane workers.
 *
 * @module
 */
import type { EngineKind } from "../../spec/engines.ts";
import type { SessionCall, SessionEvent, SessionResults, SessionSpawn } from "../session/worker_api.ts";
import type { PaneFailure } from "./errors.ts";

/**
 * How often a pane that keeps printing reports its new output generation
 * (`changed`): a quiet pane's first output is reported at once, further
 * output within this many ms in one report when they end.
 */
export const CHANGE_FLUSH_MS = 4;

/** What `spawn` needs: the program, its terminal's size and scrollback. */
export interface SpawnRequest {
  id: number;
  file: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  cols: number;
  rows: number;
  scrollback: number;
  /** What parses its output (./engine.ts); xterm when absent. */
  engine?: EngineKind;
  /** Makes the pane a ptywright session (src/core/session/engine.ts). */
  session?: SessionSpawn;
}

/**
 * A worker's heap (live objects, and what V8 holds for them), pane count, and
 * how often it handed freed memory back and how long that took (./release.ts),
 * and whether output of its panes is watched, so it rests between flood
 * turns (./panes.ts) (`system.stats`).
 */
export interface WorkerStats {
  heap_used: number;
  heap_total: number;
  panes: number;
  trims: number;
  trim_ms: number;
  watched: boolean;
  /** Whether it paces the plain-text floods it holds (./panes.ts `pacesHeld`). */
  pacing: boolean;
  /** Rows of plain-text floods laid out without xterm since the worker started (./fast_forward.ts). */
  jump_rows: number;
}

/**
 * Every op the main thread may ask of a pane worker: its request (without
 * `op` and `rid`) and its result. The pool's callers get the result type of
 * the op they sent, and the worker's handlers must return it
 * (`./ops.ts` is typed by this map).
 */
export interface WorkerOps {
  spawn: { request: SpawnRequest; result: { pid: number } };
  /** Resolves once the program has taken every byte. */
  write: { request: { id: number; data: string }; result: null };
  resize: { request: { id: number; cols: number; rows: number }; result: null };
  kill: { request: { id: number; signal: string }; result: null };
  dispose: { request: { id: number }; result: null };
  read: {
    request: { id: number; lines: number; offset: number; since?: number; join?: boolean };
    result: ReadResult;
  };
  search: { request: { id: number; pattern: string; max: number }; result: SearchResult };
  modes: { request: { id: number }; result: ModesResult };
  /** A ptywright session call; its result depends on the call's kind ({@link SessionResults}). */
  session: { request: { id: number; call: SessionCall }; result: SessionResults[SessionCall["kind"]] };
  screen: { request: { id: number; scrollback: number }; result: ScreenResult };
  clear: { request: { id: number }; result: { generation: number } };
  stats: { request: Record<never, never>; result: WorkerStats };
}

/** An op's name. */
export type OpName = keyof WorkerOps;
/** The message of op `K` (without the `rid` the pool adds). */
export type OpRequest<K extends OpName> = { op: K } & WorkerOps[K]["request"];
/** What op `K` answers. */
export type OpResult<K extends OpName> = WorkerOps[K]["result"];

/** A request from the main thread; `rid` pairs it with its reply. */
export type WorkerRequest = { [K in OpName]: { rid: number } & OpRequest<K> }[OpName];

/** A buffer of an encoded answer, handed back once written (no reply; see `RawBuffers`). */
export interface RecycleMessage {
  recycle: ArrayBuffer;
}

/**
 * Whether a client watches output of this worker's panes live (no reply):
 * while one does the worker rests between flood turns, leaving headroom for
 * that output (./panes.ts); while none does it parses flat out.
 */
export interface WatchedMessage {
  watched: boolean;
  /**
   * Sent once, at the start: an Int32Array's memory where the main thread
   * counts the requests it has posted to this worker and the worker has not
   * taken yet, so a worker parsing floods knows when to yield to its
   * message port (./panes.ts).
   */
  requests?: SharedArrayBuffer;
  /**
   * Sent once, at the start: an Int32Array's memory where the main thread
   * keeps how many workers have a pane someone watches beside panes nobody
   * does (./panes.ts: while there are any, every worker paces the
   * plain-text floods it holds).
   */
  mixedWatched?: SharedArrayBuffer;
}

/** The port to the spawner (./spawner.ts), sent once, at the start (no reply). */
export interface SpawnerMessage {
  spawner: MessagePort;
}

/** The reply to one {@link WorkerRequest}; a failure carries its code (./errors.ts). */
export type WorkerReply =
  | { rid: number; ok: true; result: OpResult<OpName> }
  | { rid: number; ok: false; error: PaneFailure };

/** Something that happened in a pane, pushed without a request. */
export type WorkerEvent =
  | { ev: "changed"; id: number; generation: number; bytes_in: number }
  | { ev: "exit"; id: number; exit_code: number; signal: number }
  | { ev: "title"; id: number; title: string }
  | SessionEvent;

/** Several events in one message, in the order they happened. */
export type WorkerBatch = WorkerEvent[];

/** Result of the `read` op. */
export interface ReadResult {
  lines: string[];
  total_lines: number;
  eof: boolean;
  /** Offset was past the oldest retained line. */
  out_of_range: boolean;
  generation: number;
  /** With `since`: the changed rows (1-based line numbers), newest last. */
  changed?: { line: number; text: string }[];
  /** With `since`: no snapshot of that generation was kept, so this is a full read. */
  reset?: boolean;
}

/** One hit of the `search` op; `line` is zero-based from the oldest line. */
export interface SearchHit {
  line: number;
  text: string;
}

/** Result of the `search` op: the hits in the screen of `generation`. */
export interface SearchResult {
  hits: SearchHit[];
  generation: number;
}

/** Result of the `modes` op. */
export interface ModesResult {
  bracketed_paste: boolean;
  alternate_screen: boolean;
  application_cursor: boolean;
  cursor: { x: number; y: number };
  generation: number;
  bytes_in: number;
}

/** What the worker answers to the `screen` op. */
export interface ScreenResult {
  ansi: string;
  cols: number;
  rows: number;
  cursor: { x: number; y: number };
  cursor_visible: boolean;
  alternate_screen: boolean;
  /** Rows of scrollback above the screen in `ansi` (plain older rows included). */
  scrollback: number;
  generation: number;
}
