/**
 * The session side of a pane worker: for panes spawned as sessions, the
 * transcript (and raw transcript file), ptywright's sequence, the title,
 * snapshots, and `session.wait` evaluated where the output is parsed. A
 * wait is checked after each batch of parsed output (one `setImmediate`
 * after the chunks of one event-loop turn), on the program's exit and when
 * a `screen_stable` duration can have elapsed: driven by the pane's own
 * changes, never by polling.
 *
 * src/core/pane/worker.ts calls the `session*` hooks; nothing here runs for other panes.
 *
 * @module
 */
import type { SessionResults } from "./worker_api.ts";
import { PwLimits } from "../../spec/ptywright.ts";
import type { OutputDelta, SessionCall, SessionEvent, SessionSpawn, WaitOutcome } from "./worker_api.ts";
import { evaluate, type Matcher, type MatchInput, stableDurations } from "./matcher.ts";
import { cursorOf, plainText, snapshotEncoded, SnapshotRows, type Term } from "./snapshot.ts";
import { Transcript } from "./transcript.ts";
import type { SafeRegex } from "./regex.ts";

interface Wait {
  wid: number;
  matcher: Matcher;
  started: number;
  deadline: number;
  durations: number[];
  regexes: Map<string, SafeRegex>;
  timer: ReturnType<typeof setTimeout> | null;
  stableTimer: ReturnType<typeof setTimeout> | null;
  resolve: (o: WaitOutcome) => void;
}

interface Session {
  id: number;
  term: SessionTerm;
  transcript: Transcript;
  sequence: number;
  title: string | null;
  exited: boolean;
  /** When the sequence last moved (performance.now). */
  changedAt: number;
  waits: Map<number, Wait>;
  raw: Deno.FsFile | null;
  pixels: { width: number; height: number };
  scheduled: boolean;
  /** When waits were last checked (performance.now). */
  checkedAt: number;
  /** The last snapshot's rows (reused where they did not change). */
  rows: SnapshotRows;
}

const sessions = new Map<number, Session>();
const waitsById = new Map<number, { s: Session; w: Wait }>();

/** A `session.wait` is pending on one of this worker's panes (its turns are kept short: ./panes.ts). */
export function waitsPending(): boolean {
  return waitsById.size > 0;
}

function post(msg: SessionEvent) {
  (self as unknown as { postMessage(m: unknown): void }).postMessage(msg);
}

/** What a session reads of its pane's terminal engine (src/core/pane/engine.ts). */
export interface SessionTerm extends Term {
  onTitle(fn: (title: string) => void): void;
}

/** Makes pane `id` a session (at spawn, before any output). */
export function openSession(id: number, term: SessionTerm, spawn: SessionSpawn): void {
  let raw: Deno.FsFile | null = null;
  if (spawn.raw_path) raw = Deno.openSync(spawn.raw_path, { append: true });
  const s: Session = {
    id,
    term,
    transcript: new Transcript(spawn.transcript_max_chars),
    sequence: 0,
    title: null,
    exited: false,
    changedAt: performance.now(),
    waits: new Map(),
    raw,
    pixels: { width: spawn.pixel_width, height: spawn.pixel_height },
    scheduled: false,
    checkedAt: -Infinity,
    rows: new SnapshotRows(),
  };
  term.onTitle((title) => (s.title = title));
  sessions.set(id, s);
}

/** A chunk of output was parsed. */
export function sessionOutput(id: number, data: Uint8Array): void {
  const s = sessions.get(id);
  if (!s) return;
  s.transcript.push(data);
  if (s.raw) {
    try {
      let off = 0;
      while (off < data.length) off += s.raw.writeSync(data.subarray(off));
    } catch {
      // A full disk or a removed file ends raw streaming, not the session.
      s.raw.close();
      s.raw = null;
    }
  }
  bump(s);
}

/** The terminal was resized: the sequence moves. */
export function sessionResized(id: number): void {
  const s = sessions.get(id);
  if (s) bump(s);
}

/** The program exited (its output is all parsed). */
export function sessionExited(id: number): void {
  const s = sessions.get(id);
  if (!s) return;
  s.exited = true;
  schedule(s);
}

/** The pane is gone: waits end as closed. */
export function sessionDisposed(id: number): void {
  const s = sessions.get(id);
  if (!s) return;
  sessions.delete(id);
  for (const w of [...s.waits.values()]) finish(s, w, { ok: false, error: "closed" });
  try {
    s.raw?.close();
  } catch { /* closed */ }
}

function bump(s: Session) {
  s.sequence++;
  s.changedAt = performance.now();
  schedule(s);
}

/** Checks within this many ms of the last check wait for the end of the turn (a flood). */
const CHECK_SPACING_MS = 2;

/**
 * Reports the change and checks the waits: at once when the session was
 * quiet (a prompt's output is answered without another event-loop turn),
 * else once after the chunks of this turn have been parsed.
 */
function schedule(s: Session) {
  if (s.scheduled) return;
  if (performance.now() - s.checkedAt >= CHECK_SPACING_MS) return flush(s);
  s.scheduled = true;
  setImmediate(() => settle(s));
}

/**
 * Reports a change put off to the end of the turn now: called before any
 * reply about the session, whose result may reflect that output (the main
 * thread seeds notification cursors from the reports, so a reply must not
 * overtake them).
 */
function settle(s: Session) {
  if (!s.scheduled) return;
  s.scheduled = false;
  if (sessions.get(s.id) === s) flush(s);
}

function flush(s: Session) {
  s.checkedAt = performance.now();
  // The waits first: an answered wait's reply (posted by its check) reaches the main thread before
  // the change, which that thread would otherwise handle first (notifications, plugin hooks).
  for (const w of [...s.waits.values()]) check(s, w);
  post({ ev: "session", id: s.id, sequence: s.sequence, chars: s.transcript.written, exited: s.exited });
}

function finish(s: Session, w: Wait, outcome: WaitOutcome) {
  if (!s.waits.delete(w.wid)) return;
  waitsById.delete(w.wid);
  if (w.timer) clearTimeout(w.timer);
  if (w.stableTimer) clearTimeout(w.stableTimer);
  w.resolve(outcome);
}

function inputOf(s: Session, stableMs: number): MatchInput {
  let screen: string | undefined;
  let transcript: string | undefined;
  const c = cursorOf(s.term);
  return {
    screen: () => (screen ??= plainText(s.term)),
    transcript: () => (transcript ??= s.transcript.text()),
    cursor: { row: c.row, col: c.col },
    exited: s.exited,
    stableMs,
  };
}

function matches(s: Session, w: Wait, stableMs: number): boolean {
  try {
    return evaluate(w.matcher, inputOf(s, stableMs), w.regexes);
  } catch {
    return false;
  }
}

/** ptywright's order: the matcher, then "can no longer match after the exit", then the deadline. */
function check(s: Session, w: Wait, atDeadline = false) {
  const now = performance.now();
  const quietSince = Math.max(s.changedAt, w.started);
  if (matches(s, w, now - quietSince)) {
    const tail = JSON.stringify(s.transcript.tail(PwLimits.tailChars));
    const json = snapshotEncoded(
      s.term,
      s.sequence,
      s.title,
      s.pixels,
      s.rows,
      `{"matched":true,"sequence":${s.sequence},"elapsed_ms":${Math.round(now - w.started)},"snapshot":`,
      `,"transcript_tail":${tail}}`,
    );
    return finish(s, w, { ok: true, json });
  }
  // After the exit nothing changes any more: if the tree cannot match even
  // once every stability duration has passed, it never will.
  if (s.exited && !matches(s, w, Infinity)) return finish(s, w, { ok: false, error: "closed" });
  if (atDeadline || now >= w.deadline) return finish(s, w, { ok: false, error: "timeout" });
  if (w.durations.length) {
    const next = w.durations.map((d) => quietSince + d).filter((t) => t > now);
    if (next.length) {
      if (w.stableTimer) clearTimeout(w.stableTimer);
      const at = Math.min(...next);
      w.stableTimer = setTimeout(() => {
        w.stableTimer = null;
        if (s.waits.has(w.wid)) check(s, w);
      }, Math.max(0, Math.ceil(at - now)));
    }
  }
}

/**
 * Starts `session.wait` `call` on pane `id`; `done` is called with the
 * outcome the moment it is known (synchronously, from the check that
 * decides it: a promise would deliver it behind every read completion
 * already queued, up to 16 ms during floods). Throws if the pane is not a
 * session.
 */
export function startWait(
  id: number,
  call: Extract<SessionCall, { kind: "wait" }>,
  done: (outcome: WaitOutcome) => void,
): void {
  const s = sessions.get(id);
  if (!s) throw new Error(`pane ${id} is not a session`);
  settle(s);
  wait(s, call, done);
}

function wait(
  s: Session,
  call: Extract<SessionCall, { kind: "wait" }>,
  resolve: (o: WaitOutcome) => void,
): void {
  const started = performance.now();
  const w: Wait = {
    wid: call.wid,
    matcher: call.matcher,
    started,
    deadline: started + call.timeout_ms,
    durations: [...new Set(stableDurations(call.matcher))],
    regexes: new Map(),
    timer: null,
    stableTimer: null,
    resolve,
  };
  s.waits.set(w.wid, w);
  waitsById.set(w.wid, { s, w });
  w.timer = setTimeout(() => {
    w.timer = null;
    if (s.waits.has(w.wid)) check(s, w, true);
  }, call.timeout_ms);
  check(s, w);
}

/** Answers one session call for pane `id` (a wait goes through {@link startWait}). */
export function sessionCall(
  id: number,
  call: Exclude<SessionCall, { kind: "wait" }>,
): SessionResults[SessionCall["kind"]] {
  if (call.kind === "cancel") {
    const found = waitsById.get(call.wid);
    if (found) finish(found.s, found.w, { ok: false, error: call.reason });
    return { cancelled: !!found };
  }
  const s = sessions.get(id);
  if (!s) throw new Error(`pane ${id} is not a session`);
  settle(s);
  switch (call.kind) {
    case "snapshot":
      return snapshotEncoded(s.term, s.sequence, s.title, s.pixels, s.rows);
    case "transcript":
      return { text: s.transcript.text() };
    case "output": {
      const { text, dropped } = s.transcript.since(call.since);
      return { text, dropped, chars: s.transcript.written, sequence: s.sequence } satisfies OutputDelta;
    }
    case "pixels":
      s.pixels = { width: call.width, height: call.height };
      return null;
  }
}
