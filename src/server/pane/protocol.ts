/**
 * Messages between the host's main thread and its pane workers.
 *
 * @module
 */
import type { SessionCall, SessionEvent, SessionSpawn } from "../../session/_protocol.ts";

/**
 * How often a pane that keeps printing reports its new output generation
 * (`changed`): a quiet pane's first output is reported at once, further
 * output within this many ms in one report when they end.
 */
export const CHANGE_FLUSH_MS = 4;

/**
 * How the error of a `write` the pane's program stopped taking begins: the
 * main thread maps it to the `input_stalled` reason.
 */
export const STALLED = "the program stopped reading its input";

/** A request from the main thread; `rid` pairs it with its reply. */
export type WorkerRequest =
  & { rid: number }
  & (
    | {
      op: "spawn";
      id: number;
      file: string;
      args: string[];
      cwd: string;
      env: Record<string, string>;
      cols: number;
      rows: number;
      scrollback: number;
      /** Makes the pane a ptywright session (src/session/worker.ts). */
      session?: SessionSpawn;
    }
    | { op: "write"; id: number; data: string }
    | { op: "resize"; id: number; cols: number; rows: number }
    | { op: "kill"; id: number; signal: string }
    | { op: "dispose"; id: number }
    | { op: "read"; id: number; lines: number; offset: number; since?: number; join?: boolean }
    | { op: "search"; id: number; pattern: string; max: number }
    | { op: "modes"; id: number }
    | { op: "session"; id: number; call: SessionCall }
    | { op: "screen"; id: number; scrollback: number }
    | { op: "clear"; id: number }
    | { op: "stats" }
  );

/** The reply to one {@link WorkerRequest}. */
export type WorkerReply =
  | { rid: number; ok: true; result: unknown }
  | { rid: number; ok: false; error: string };

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
