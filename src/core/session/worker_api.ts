/**
 * What the main thread and a pane worker say about sessions: the spawn
 * option that makes a pane a session, the calls (one `session` worker op),
 * and the result shapes (ptywright's, docs/ptywright.md).
 *
 * @module
 */
import type { Matcher } from "./matcher.ts";
import type { EncodedJson } from "../../wire/raw_json.ts";

/** Given at spawn: the pane keeps a transcript and answers session calls. */
export interface SessionSpawn {
  transcript_max_chars: number;
  /** The raw transcript file (created by the main thread); bytes are appended. */
  raw_path: string | null;
  pixel_width: number;
  pixel_height: number;
}

/** One session call to the worker. */
export type SessionCall =
  /** Answered with the snapshot as an EncodedJson (its buffer transferred). */
  | { kind: "snapshot" }
  | { kind: "transcript" }
  /** The transcript since `since` characters were written. */
  | { kind: "output"; since: number }
  | { kind: "wait"; wid: number; matcher: Matcher; timeout_ms: number }
  | { kind: "cancel"; wid: number; reason: "closed" | "cancelled" }
  | { kind: "pixels"; width: number; height: number };

/** What each session call answers (the worker's `session` op). */
export interface SessionResults {
  /** The ScreenSnapshot as UTF-8 JSON (built once, in the worker; its buffer transferred). */
  snapshot: EncodedJson;
  transcript: { text: string };
  output: OutputDelta;
  wait: WaitOutcome;
  cancel: { cancelled: boolean };
  pixels: null;
}

/** A cell's style. Colours: `default`, `idx:N` or `rgb:R:G:B`. */
export interface CellStyle {
  foreground: string;
  background: string;
  bold: boolean;
  dim: boolean;
  italic: boolean;
  underline: boolean;
  inverse: boolean;
}

/** One cell of a snapshot. */
export interface Cell {
  row: number;
  col: number;
  text: string;
  wide: boolean;
  wide_continuation: boolean;
  style: CellStyle;
}

/** ptywright's ScreenSnapshot. */
export interface ScreenSnapshot {
  size: { rows: number; cols: number; pixel_width: number; pixel_height: number };
  cursor: { row: number; col: number; visible: boolean };
  sequence: number;
  plain_text: string;
  cells: Cell[];
  alternate_screen: boolean;
  application_cursor: boolean;
  application_keypad: boolean;
  title: string | null;
}

/** The result of `session.wait`. */
export interface WaitResult {
  matched: true;
  sequence: number;
  elapsed_ms: number;
  snapshot: ScreenSnapshot;
  transcript_tail: string;
}

/** How a wait ended in the worker. */
export type WaitOutcome =
  /** `json`: the {@link WaitResult} as UTF-8 JSON (built once, in the worker; its buffer is transferred). */
  | { ok: true; json: EncodedJson }
  | { ok: false; error: "timeout" | "closed" | "cancelled" };

/** Result of the `output` call. */
export interface OutputDelta {
  text: string;
  /** Characters written so far (the next cursor). */
  chars: number;
  /** Some of the text since the cursor was evicted by the transcript bound. */
  dropped: boolean;
  sequence: number;
}

/** Pushed by the worker when a session's sequence moves or its program exits. */
export interface SessionEvent {
  ev: "session";
  id: number;
  sequence: number;
  chars: number;
  exited: boolean;
}
