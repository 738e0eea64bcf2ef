/**
 * The pane worker's panes: each PTY with its terminal, parsing and flow
 * control, and the reports of new output. The worker's ops (./ops.ts) act on
 * them; the message loop is ./worker.ts.
 *
 * Parsing and flow control: each chunk read from the PTY is parsed at once,
 * synchronously (the engine's `parseNow`, ./engine.ts: xterm's
 * `WriteBuffer.writeSync` or Ghostty's WebAssembly), so the PTY is not read
 * again until the chunk is on the screen: the kernel's PTY buffer is the
 * only queue, and a flood blocks the writer like a real terminal does. A
 * flood of plain text is the exception: up to {@link HOLD_BYTES} of it is
 * held and parsed in one batch, at most {@link HOLD_MS} later (or at once
 * for a request on the pane), so that the rows it scrolls away within the
 * batch skip xterm (./fast_forward.ts; the xterm engine's jump scroll).
 * xterm's own async `write` would parse in 12 ms slices separated by
 * `setTimeout(0)` hops, which Deno clamps (~25% of a core idle while a
 * flood waits). Without `writeSync` (another xterm version) the pane falls
 * back to `write`, with the PTY paused while more than {@link HIGH_WATER}
 * bytes wait in xterm's queue and resumed below {@link LOW_WATER}.
 *
 * With the xterm engine, scrollback beyond a small staging area lives in
 * `Scrollback` as compact text rows (see ./scrollback.ts): ~0.1 KB per row
 * instead of xterm's ~1.3 KB.
 *
 * @module
 */
import pty from "@lydell/node-pty";
import { CHANGE_FLUSH_MS, type SpawnRequest } from "./worker_api.ts";
import { PtyInput } from "./pty_input.ts";
import { PaneError, PaneErrorCode } from "./errors.ts";
import { canSpawnDirect, DirectPty, type PanePty } from "./host_pty.ts";
import { closeOnExecAll, wrapSpawn } from "../isolation/spawn.ts";
import {
  openSession,
  sessionDisposed,
  sessionExited,
  sessionOutput,
  waitsPending,
} from "../session/engine.ts";
import { emit, flushOutbox } from "./outbox.ts";
import type { Snapshot } from "./screen.ts";
import type { PaneEngine } from "./engine.ts";
import { createEngine } from "./engines.ts";
import { Held, plainText } from "./fast_forward.ts";
import { type DrainState, guardDrainOnExit, scheduleDeferredDestroy } from "./drain.ts";
import { MAX_DELAY_MS, releaser, WATCHED_MAX_DELAY_MS } from "./release.ts";
import { niceThisThread, type Spawn, spawnHere, spawnThrough } from "./spawner.ts";

const HIGH_WATER = 2 * 1024 * 1024;
const LOW_WATER = 256 * 1024;

/** A pane: its PTY, its terminal, and what flow control and the reads keep. */
export interface Pane extends DrainState {
  id: number;
  /** Writes into the PTY (node-pty's own write loses bytes under Deno). */
  input: PtyInput;
  /** Its terminal (./engine.ts). */
  engine: PaneEngine;
  generation: number;
  bytesIn: number;
  exited: boolean;
  snapshots: Snapshot[];
  /** When the pane last reported new output (ms, performance.now). */
  reportedAt: number;
  /** How long parsing its last chunk took (ms): what resuming it costs the next turn. */
  chunkMs: number;
  /** When it was last resumed after going over a turn's budget (ms, performance.now). */
  resumedAt: number;
  /** The engine's jump scroll (./fast_forward.ts); null where it has none. */
  jump: PaneEngine["jump"];
  /** A flood's output read and not parsed yet (counted in `pending` too). */
  held: Held;
  /** Output is held (jump scroll) again once `bytesIn` reaches this. */
  holdFrom: number;
}

/** The worker's panes by id. */
export const panes = new Map<number, Pane>();

/**
 * Parsing time one turn of the event loop may spend before the panes that
 * deliver more wait for the next turn: libuv reads a ready PTY up to 32 times
 * per turn, so without a budget a few floods hold the worker for hundreds of
 * milliseconds and every other pane's output and every read wait behind them.
 */
const TURN_BUDGET_MS = 8;
/** A chunk this small after a quiet spell is a prompt's output, not a flood's (a PTY read holds up to 4 KiB). */
const QUIET_CHUNK_BYTES = 1024;
/**
 * The budget while someone watches output of this worker's panes live (or a
 * `session.wait` is pending on one): the watched output is parsed only
 * between the floods' chunks, so shorter turns bring it sooner, for a little
 * throughput (docs/performance.md, "Figures behind constants in the code").
 */
const WATCHED_TURN_BUDGET_MS = 3;
const turnBudget = () => (watched || waitsPending() ? WATCHED_TURN_BUDGET_MS : TURN_BUDGET_MS);
// Handing memory back mid-flood waits longer while a client watches or waits on output (./release.ts).
releaser.maxDelay = () => (watched || waitsPending() ? WATCHED_MAX_DELAY_MS : MAX_DELAY_MS);
/**
 * How long the worker rests after a turn in which several panes ran over the
 * budget. During the rest the turn does not end: a pane that delivers parses
 * that chunk at once (a quiet pane's output is not delayed) and then waits
 * with the others. Parsing flat out, the workers and the floods' writers
 * saturate the cores, and a quiet pane's output then waits for the kernel's
 * PTY work and for a core (20 `cat` floods: output → frame p99 ~600 ms);
 * resting leaves that headroom (p99 ~15 ms). A single flood never rests.
 */
const FLOOD_REST_MS = Number(Deno.env.get("PANEFLOW_FLOOD_REST_MS") ?? 2);
/**
 * Whether a client watches output of this worker's panes live (the main
 * thread says so: `PanePool.watch`, which a pending `session.wait` counts in
 * too). The rest buys latency for watched output with a third or more of
 * the worker's throughput (bench/corpus.ts, 20 floods of the build mix:
 * 14.9–17.4 MiB/s watched, 25–31 MiB/s not), so it is taken only while
 * someone watches, and only by the workers of the panes watched (and by
 * every worker holding plain-text floods while a watched pane shares its
 * worker with others, see {@link pacesHeld}).
 */
let watched = false;
/** Requests the main thread has posted and this worker has not taken (see `WatchedMessage`). */
let requests: Int32Array | null = null;
/** How many workers have a watched pane beside panes nobody watches (see `WatchedMessage`). */
let mixedWatched: Int32Array | null = null;
/**
 * Someone watches output of this worker's panes, or of a pane that shares
 * its worker with panes nobody watches: that pane's output is read only
 * between its neighbours' chunks. A flood of plain text costs a worker
 * little to read and hold (./fast_forward.ts), so its writer and the
 * kernel's PTY work, not the parse, then fill the cores: every worker paces
 * the floods it holds meanwhile (`take`), or the watched pane's output
 * waits for a core (20 floods of build output, one pane watched beside a
 * third of them: output → frame p99 22.8–26.6 ms with only its worker
 * pacing, 18.0 ms with every worker). A watched pane on a worker of its
 * own (new panes start beside none, ./pool.ts) needs none of it.
 */
export const pacesHeld = (): boolean =>
  watched || waitsPending() || (mixedWatched !== null && Atomics.load(mixedWatched, 0) > 0);
/** Whether a client watches output of this worker's panes (`system.stats`). */
export const isWatched = (): boolean => watched;
export function setWatched(on: boolean, counter?: SharedArrayBuffer, mixed?: SharedArrayBuffer): void {
  watched = on;
  if (counter) requests = new Int32Array(counter);
  if (mixed) mixedWatched = new Int32Array(mixed);
}
/** A request from the main thread has been taken off the message port. */
export function requestTaken(): void {
  if (requests) Atomics.sub(requests, 0, 1);
}
/**
 * The rest after a turn in which `floods` panes went over the budget:
 * {@link FLOOD_REST_MS} while output is watched and several flood;
 * otherwise none, but one more pass of the event loop (0) while a request
 * from the main thread waits, since turn after turn of parsing leaves the
 * worker's message port unread (an already satisfied `session.wait`
 * during 20 floods: p50 165 ms without, 11 ms with; a timer instead of the
 * pass cost a fifth of the fan-out's throughput); -1: straight on.
 */
const restMs = (floods: number) =>
  floods > 1 && (watched || waitsPending() || (turnHeld > 0 && pacesHeld()))
    ? FLOOD_REST_MS
    : requests && Atomics.load(requests, 0) > 0
    ? 0
    : -1;
let turnStart = 0;
/** Output held this turn (read, not parsed yet). */
let turnHeld = 0;
let turnScheduled = false;
/** Paused for going over the budget, in the order they are resumed (longest waiting first). */
const throttledPanes = new Set<Pane>();
/** A timer that resumes the next throttled panes when no pane delivers to end a turn. */
let resumeTimer: ReturnType<typeof setTimeout> | null = null;

function scheduleTurn() {
  if (turnScheduled) return;
  turnScheduled = true;
  setImmediate(() => {
    turnScheduled = false;
    const rest = restMs(throttledPanes.size);
    if (rest > 0) setTimeout(endTurn, rest);
    else if (rest === 0) setImmediate(endTurn);
    else endTurn();
  });
}

/**
 * Ends a turn: resumes throttled panes, but only as many as one turn's
 * budget can parse. Each resumed PTY is read in the next poll, and the
 * chunk read is parsed whatever the budget says, so resuming every flood at
 * once makes the next turn parse a chunk of each of them (20 floods on two
 * workers: ten) before a quiet pane's output or a `session.wait`'s match.
 * The others stay paused, first in line for the next turn.
 */
function endTurn() {
  turnStart = 0;
  turnHeld = 0;
  const budget = turnBudget();
  let cost = 0;
  for (const p of [...throttledPanes]) {
    if (cost > 0 && cost + p.chunkMs > budget) break;
    cost += p.chunkMs;
    throttledPanes.delete(p);
    p.throttled = false;
    p.resumedAt = performance.now();
    if (panes.get(p.id) === p && !p.paused && !p.exited) p.pty.resume();
    scheduleDeferredDestroy(p);
  }
  // The resumed panes' output starts the next turn; if they have none, this does.
  if (throttledPanes.size && resumeTimer === null) {
    resumeTimer = setTimeout(() => {
      resumeTimer = null;
      if (turnStart === 0 && !turnScheduled) endTurn();
    }, Math.max(0, restMs(throttledPanes.size)));
  }
}
const dirty = new Set<number>();
let flushTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * Reports a pane's new output: at once when it last reported
 * {@link CHANGE_FLUSH_MS} ago or more (a quiet pane's output is news), else
 * coalesced into the next flush (a flood is a bounded number of frames).
 */
function markDirty(pane: Pane, now = performance.now()) {
  if (dirty.has(pane.id)) return;
  const wait = pane.reportedAt + CHANGE_FLUSH_MS - now;
  if (wait <= 0) return report(pane, now);
  dirty.add(pane.id);
  if (flushTimer === null) flushTimer = setTimeout(flushChanges, wait);
}

function report(pane: Pane, now = performance.now()) {
  pane.reportedAt = now;
  emit({ ev: "changed", id: pane.id, generation: pane.generation, bytes_in: pane.bytesIn });
}

function flushChanges() {
  flushTimer = null;
  const now = performance.now();
  for (const id of dirty) {
    const pane = panes.get(id);
    if (pane) report(pane, now);
  }
  dirty.clear();
}

/**
 * How long a flood's output may be held before it is parsed, and how much
 * of it: parsed in batches, the rows that scroll out within a batch go
 * into the scrollback without xterm (./fast_forward.ts). A read, a request
 * or the program's exit parses what is held first, so nobody sees the
 * screen behind; a watcher sees a flood's frames up to this much later.
 */
const HOLD_MS = 25;
const HOLD_BYTES = 128 * 1024;
/** What a worker whose panes someone watches holds: its parses of held output stay short. */
const WATCHED_HOLD_BYTES = 32 * 1024;
/** Output a turn may hold while held floods are paced (see {@link pacesHeld}). */
const WATCHED_TURN_HELD = 64 * 1024;
/** After a big batch with nothing to skip, this much output is parsed as it comes. */
const HOLD_PAUSE_BYTES = 1024 * 1024;

/**
 * A chunk read from a pane's PTY: held while the pane floods plain text,
 * else parsed now (with what was held before it). A full-screen program's
 * redraws (cursor addressing) are never held.
 */
function take(pane: Pane, data: Uint8Array) {
  const now = performance.now();
  // Output after a quiet spell (not one of our pauses) is news: its report goes at once, not
  // at the end of a turn that may spend its budget on floods first.
  const news = now - Math.max(pane.lastDataAt, pane.resumedAt) > CHANGE_FLUSH_MS;
  releaser.churn(data.length, now);
  if (!news && pane.jump && pane.bytesIn >= pane.holdFrom && plainText(data)) {
    pane.lastDataAt = now;
    pane.held.add(data);
    pane.pending += data.length;
    if (pane.held.bytes >= (watched ? WATCHED_HOLD_BYTES : HOLD_BYTES)) parseHeld(pane);
    else pane.held.timer ??= setTimeout(() => parseHeld(pane), HOLD_MS);
    // While held floods are paced, a turn holds at most WATCHED_TURN_HELD before the floods
    // wait (and the worker rests): see `pacesHeld`.
    turnHeld += data.length;
    if (turnStart === 0) {
      turnStart = now;
      scheduleTurn();
    }
    if (turnHeld > WATCHED_TURN_HELD && pacesHeld()) throttle(pane);
    return;
  }
  parseHeld(pane); // what came before it first
  parse(pane, data, news);
}

/** Pauses `pane` until a later turn. */
function throttle(pane: Pane) {
  if (pane.throttled) return;
  pane.throttled = true;
  pane.pty.pause();
  throttledPanes.add(pane);
}

/** Rows of held output laid out without xterm in this worker (`system.stats`). */
let jumped = 0;
export const jumpRows = (): number => jumped;

/** Parses what `pane` holds, if anything (before a request is answered, at exit, at the deadline). */
export function parseHeld(pane: Pane): void {
  if (!pane.held.bytes || panes.get(pane.id) !== pane) return pane.held.drop();
  const chunks = pane.held.count;
  const data = pane.held.take();
  pane.pending -= data.length;
  const skipped = pane.jump!.skipped;
  parse(pane, data, false, pane.jump, chunks);
  // A big batch of plain text with nothing to skip (scroll margins, the cursor held off the
  // bottom row): holding it buys nothing for a while.
  if (pane.jump!.skipped === skipped && data.length >= WATCHED_HOLD_BYTES) {
    pane.holdFrom = pane.bytesIn + HOLD_PAUSE_BYTES;
  }
  jumped += pane.jump!.skipped - skipped;
  scheduleDeferredDestroy(pane);
}

/**
 * Parses a chunk (or the `chunks` of a batch) of output now, with the
 * turn's flow control and the reports; the output generation advances by
 * one per chunk read, held or not.
 */
function parse(pane: Pane, data: Uint8Array, news: boolean, jump: Pane["jump"] = null, chunks = 1) {
  const parseStart = performance.now();
  if (jump) jump.parse(data);
  else pane.parseNow!(data);
  // One clock read after the chunk (its arrival, its cost, the turn's budget, the report).
  const now = performance.now();
  pane.lastDataAt = now;
  pane.chunkMs = now - parseStart;
  if (turnStart === 0) {
    turnStart = now;
    scheduleTurn();
  }
  // A chunk after a quiet spell is not a flood's: pausing that pane would put its next output
  // (a prompt's answer, the line a `session.wait` waits for) behind every throttled flood.
  if (!(news && data.length <= QUIET_CHUNK_BYTES) && now - turnStart > turnBudget()) throttle(pane);
  pane.engine.afterParse();
  pane.generation += chunks;
  markDirty(pane, now);
  sessionOutput(pane.id, data);
  if (news) flushOutbox();
}

/** Starts a program in a new PTY with its terminal. */
export function spawnPane(req: SpawnRequest): { pid: number } {
  const engine = createEngine(req.engine ?? "xterm", req);
  let p: PanePty;
  try {
    p = startPty(req);
  } finally {
    // Only its own terminal: see ../isolation/spawn.ts.
    closeOnExecAll();
  }
  const pane = newPane(req.id, p, engine);
  panes.set(req.id, pane);
  if (req.session) openSession(req.id, engine, req.session);
  guardDrainOnExit(pane);

  engine.onTitle((title) => emit({ ev: "title", id: pane.id, title }));
  p.onData((data) => onPtyData(pane, data));
  p.onExit(({ exitCode, signal }) => onPtyExit(pane, exitCode, signal ?? 0));
  // Answer terminal queries (DA, DSR) the way a terminal would.
  engine.onReply((data) => {
    if (!pane.exited && !pane.disposed) pane.input.write(data).catch(() => {});
  });
  return { pid: p.pid };
}

/** A pane's record, fresh: nothing read, nothing parsed. */
function newPane(id: number, p: PanePty, engine: PaneEngine): Pane {
  return {
    id,
    pty: p,
    input: new PtyInput(p.fd, (data) => p.write(data)),
    engine,
    pending: 0,
    paused: false,
    generation: 0,
    bytesIn: 0,
    exited: false,
    deferredDestroy: null,
    drainTimer: null,
    snapshots: [],
    parseNow: engine.parseNow,
    lastDataAt: 0,
    destroyAskedAt: 0,
    throttled: false,
    reportedAt: -Infinity,
    chunkMs: 0,
    resumedAt: 0,
    jump: engine.jump,
    held: new Held(),
    holdFrom: 0,
    reaped: false,
    disposed: false,
  };
}

/**
 * A chunk the PTY delivered: parsed at once (synchronous parsing), or queued
 * to xterm with the PTY paused above `HIGH_WATER` until xterm is back under
 * `LOW_WATER`.
 */
function onPtyData(pane: Pane, data: Uint8Array): void {
  pane.bytesIn += data.length;
  if (pane.parseNow) {
    if (panes.get(pane.id) !== pane) return; // disposed; the PTY is being torn down
    take(pane, data);
    return;
  }
  pane.lastDataAt = performance.now();
  releaser.churn(data.length, pane.lastDataAt);
  pane.pending += data.length;
  if (!pane.paused && pane.pending > HIGH_WATER) {
    pane.paused = true;
    pane.pty.pause();
  }
  pane.engine.write(data, () => {
    pane.engine.afterParse();
    pane.pending -= data.length;
    pane.generation++;
    markDirty(pane);
    sessionOutput(pane.id, data);
    if (pane.paused && pane.pending < LOW_WATER) {
      pane.paused = false;
      pane.pty.resume();
      scheduleDeferredDestroy(pane);
    } else if (pane.pending === 0) {
      // The program may have exited while xterm still had a backlog (without
      // ever pausing): the destroy deferred then must still happen, or the
      // exit is never reported.
      scheduleDeferredDestroy(pane);
    }
  });
}

/** The program exited: reported once its last output is parsed. */
function onPtyExit(pane: Pane, exitCode: number, signal: number): void {
  pane.reaped = true;
  const report = () => {
    pane.exited = true;
    flushChanges();
    emit({ ev: "exit", id: pane.id, exit_code: exitCode, signal });
    sessionExited(pane.id);
  };
  // node-pty reports the exit once the PTY is drained; every chunk it
  // delivered is parsed already when parsing is synchronous. Otherwise let
  // xterm finish its queue first, so a reader that sees "exited" also sees
  // the final screen.
  if (pane.parseNow) {
    parseHeld(pane);
    report();
  } else pane.engine.write("", report);
}

/** Pane programs start without forking the host where they can (./host_pty.ts). */
const DIRECT = canSpawnDirect();
/** How this worker starts them: itself, until the pool hands it the spawner (./spawner.ts). */
let spawn: Spawn = spawnHere;

/**
 * Programs start through the spawner on `port` from now on, and this worker
 * parses at a lower priority than the host's main thread. Not with node-pty:
 * it forks in this thread, and its programs would inherit the priority.
 */
export function useSpawner(port: MessagePort): void {
  if (!DIRECT) return port.close();
  spawn = spawnThrough(port);
  niceThisThread();
}

/** The program of `req` on a new PTY: directly, or through node-pty. */
function startPty(req: SpawnRequest): PanePty {
  const opts = { cols: req.cols, rows: req.rows, cwd: req.cwd, name: "xterm-256color" };
  if (DIRECT) return new DirectPty(req.file, req.args, { ...opts, env: req.env }, spawn);
  const run = wrapSpawn(req.file, req.args, req.env);
  const p = pty.spawn(run.file, run.args, {
    ...opts,
    env: run.env,
    // Raw bytes: xterm decodes UTF-8 itself (across chunk boundaries), and
    // skipping node-pty's string decoding makes reading the PTY ~1.5x cheaper.
    encoding: null,
  });
  // With `encoding: null` node-pty hands over bytes (its types say string), and its UnixTerminal
  // has an `fd` getter its typings leave out.
  return p as unknown as PanePty;
}

/** The pane `id`, or an error. */
export function mustGet(id: number): Pane {
  const pane = panes.get(id);
  if (!pane) throw new PaneError(PaneErrorCode.NoPane, `No pane ${id} in worker`);
  return pane;
}

/** Runs after xterm has parsed everything queued so far. */
export function afterWrites<T>(pane: Pane, fn: () => T): Promise<T> {
  if (pane.pending === 0) return Promise.resolve(fn());
  return new Promise((resolve, reject) =>
    pane.engine.write("", () => {
      try {
        resolve(fn());
      } catch (e) {
        reject(e);
      }
    })
  );
}

/**
 * Clears the scrollback and the screen above the cursor's row, which becomes
 * the top row (a shell's prompt stays, with the cursor where it was). Done in
 * the emulator, as if the program had printed it: nothing is typed.
 */
export function clearPane(pane: Pane): Promise<{ generation: number }> {
  const buf = pane.engine.active;
  const y = buf.type === "normal" ? buf.cursorY : 0;
  const seq = `\x1b[3J${y > 0 ? `\x1b[${y}S\x1b[${y}A` : ""}`;
  return new Promise((resolve) =>
    pane.engine.write(seq, () => {
      pane.engine.afterParse();
      pane.generation++;
      markDirty(pane);
      resolve({ generation: pane.generation });
    })
  );
}

/** Closes pane `id`: its program gets SIGHUP, its terminal is freed. */
export function disposePane(id: number): null {
  const pane = panes.get(id);
  if (!pane) return null;
  panes.delete(id);
  sessionDisposed(id);
  dirty.delete(id);
  throttledPanes.delete(pane);
  pane.disposed = true;
  // Nothing is written into a closed pane, not even what was queued.
  pane.input.close();
  if (!pane.exited) {
    try {
      pane.pty.kill("SIGHUP");
    } catch { /* already gone */ }
  }
  pane.engine.dispose();
  releaser.closedPane(performance.now());
  // Its parser callbacks never come now: nothing may wait for them.
  if (pane.paused || pane.throttled) pane.pty.resume();
  pane.paused = pane.throttled = false;
  pane.held.drop();
  pane.pending = 0;
  scheduleDeferredDestroy(pane);
  return null;
}
