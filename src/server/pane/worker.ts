/**
 * Pane worker: owns PTYs and their headless terminals, off the socket's
 * thread. node-pty reads on the main thread starve the event loop (20 busy
 * panes gave `system.ping` p99 1.3 s); here they only slow each other.
 *
 * The main thread talks to it with {@link WorkerRequest} messages and gets
 * {@link WorkerReply} and {@link WorkerEvent} messages back.
 *
 * Parsing and flow control: each chunk node-pty reads is parsed at once,
 * synchronously (xterm's `WriteBuffer.writeSync`), so the PTY is not read
 * again until the chunk is on the screen: the kernel's PTY buffer is the
 * only queue, and a flood blocks the writer like a real terminal does.
 * xterm's own async `write` would parse in 12 ms slices separated by
 * `setTimeout(0)` hops, which Deno clamps (~25% of a core idle while a
 * flood waits). Without `writeSync` (another xterm version) the pane falls
 * back to `write`, with the PTY paused while more than {@link HIGH_WATER}
 * bytes wait in xterm's queue and resumed below {@link LOW_WATER}.
 *
 * Scrollback beyond a small staging area lives in {@link Scrollback} as
 * compact text rows (see ./scrollback.ts): ~0.1 KB per row instead of
 * xterm's ~1.3 KB.
 *
 * @module
 */
import pty from "@lydell/node-pty";
import xterm from "@xterm/headless";
import { CHANGE_FLUSH_MS, type WorkerRequest } from "./protocol.ts";
import { PtyInput } from "./pty_input.ts";
import { closeOnExecAll, wrapSpawn } from "../../isolation/spawn.ts";
import {
  openSession,
  sessionCall,
  sessionDisposed,
  sessionExited,
  sessionOutput,
  sessionResized,
} from "../../session/worker.ts";
import { Scrollback, stagingRows } from "./scrollback.ts";
import { emit, post } from "./outbox.ts";
import { transferOf } from "../../wire/raw_json.ts";
import { buffer, olderRows, read, remember } from "./views.ts";
import { serializeScreen } from "./screen_state.ts";
import { searchLines, type Snapshot, snapshotModes } from "./screen.ts";

const HIGH_WATER = 2 * 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** Quiet time before a socket whose process exited is destroyed. */
const DRAIN_QUIET_MS = 200;
/** How long after the exit a socket still delivering data is kept open. */
const DRAIN_MAX_MS = 2000;
/** Polls for the exit of a program that closed its terminal: first after, and at most every. */
const EXIT_POLL_MS = 2;
const EXIT_POLL_MAX_MS = 50;
/** Snapshots kept per pane for `read --since`. */

interface Pane {
  id: number;
  pty: pty.IPty;
  /** Writes into the PTY (node-pty's own write loses bytes under Deno). */
  input: PtyInput;
  term: xterm.Terminal;
  pending: number;
  paused: boolean;
  generation: number;
  bytesIn: number;
  exited: boolean;
  deferredDestroy: (() => void) | null;
  drainTimer: ReturnType<typeof setTimeout> | null;
  /** Rows trimmed off the top of the normal buffer since the start (without `scrollback`). */
  trimmed: number;
  snapshots: Snapshot[];
  /** The compact scrollback; null when xterm keeps all of it. */
  scrollback: Scrollback | null;
  /** Parses a chunk synchronously; null when this xterm has no `writeSync`. */
  parseNow: ((data: Uint8Array) => void) | null;
  /** When the PTY last delivered data (ms, performance.now). */
  lastDataAt: number;
  /** When node-pty first tried to destroy the socket after the exit. */
  destroyAskedAt: number;
  /** When the pane last reported new output (ms, performance.now). */
  reportedAt: number;
  /** Paused until the next turn of the event loop (see {@link TURN_BUDGET_MS}). */
  throttled: boolean;
  /** node-pty reported the program's exit (it has been reaped). */
  reaped: boolean;
  /** The pane was closed: its terminal is gone and nothing waits for its output. */
  disposed: boolean;
}

/** The worker's global scope (the default lib types `self` as a window). */
const scope = self as unknown as {
  postMessage(msg: unknown): void;
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
};

const panes = new Map<number, Pane>();
/**
 * Parsing time one turn of the event loop may spend before the panes that
 * deliver more wait for the next turn: libuv reads a ready PTY up to 32 times
 * per turn, so without a budget a few floods hold the worker for hundreds of
 * milliseconds and every other pane's output and every read wait behind them.
 */
const TURN_BUDGET_MS = 8;
/**
 * How long the worker rests after a turn in which several panes ran over the
 * budget. During the rest the turn does not end: a pane that delivers parses
 * that chunk at once (a quiet pane's output is not delayed) and then waits
 * with the others. Parsing flat out, the workers and the floods' writers
 * saturate the cores, and a quiet pane's output then waits for the kernel's
 * PTY work and for a core (20 `cat` floods: output → frame p99 ~600 ms);
 * resting leaves that headroom (p99 ~15 ms). A single flood never rests.
 */
const FLOOD_REST_MS = Number(Deno.env.get("PANEFLOW_FLOOD_REST_MS") ?? 4); // bench/corpus.ts --rest
let turnStart = 0;
let turnScheduled = false;
const throttledPanes = new Set<Pane>();

function scheduleTurn() {
  if (turnScheduled) return;
  turnScheduled = true;
  setImmediate(() => {
    turnScheduled = false;
    if (throttledPanes.size > 1) setTimeout(endTurn, FLOOD_REST_MS);
    else endTurn();
  });
}

function endTurn() {
  turnStart = 0;
  const list = [...throttledPanes];
  throttledPanes.clear();
  for (const p of list) {
    p.throttled = false;
    if (panes.get(p.id) === p && !p.paused && !p.exited) p.pty.resume();
    scheduleDeferredDestroy(p);
  }
}
const dirty = new Set<number>();
let flushTimer: ReturnType<typeof setTimeout> | null = null;

/**
 * Reports a pane's new output: at once when it last reported
 * {@link CHANGE_FLUSH_MS} ago or more (a quiet pane's output is news), else
 * coalesced into the next flush (a flood is a bounded number of frames).
 */
function markDirty(pane: Pane) {
  if (dirty.has(pane.id)) return;
  const now = performance.now();
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

function spawnPane(req: Extract<WorkerRequest, { op: "spawn" }>): { pid: number } {
  const term = new xterm.Terminal({
    cols: req.cols,
    rows: req.rows,
    scrollback: stagingRows(req.scrollback),
    allowProposedApi: true,
    // xterm logs every parse error; a pane printing binary would write ~5x its
    // output into the host's log.
    logLevel: "off",
  });
  // Only its own terminal: see ../isolation/spawn.ts.
  const run = wrapSpawn(req.file, req.args, req.env);
  let p: pty.IPty;
  try {
    p = pty.spawn(run.file, run.args, {
      name: "xterm-256color",
      cols: req.cols,
      rows: req.rows,
      cwd: req.cwd,
      env: run.env,
      // Raw bytes: xterm decodes UTF-8 itself (across chunk boundaries), and
      // skipping node-pty's string decoding makes reading the PTY ~1.5x cheaper.
      encoding: null,
    });
  } finally {
    closeOnExecAll();
  }
  const scrollback = Scrollback.attach(term, req.scrollback);
  if (!scrollback) term.options.scrollback = req.scrollback;
  // deno-lint-ignore no-explicit-any
  const writeBuffer = (term as any)._core?._writeBuffer;
  const parseNow = typeof writeBuffer?.writeSync === "function"
    ? (data: Uint8Array) => {
      try {
        writeBuffer.writeSync(data);
      } catch {
        // xterm threw on this chunk: reset the queue writeSync left mid-loop,
        // or every later chunk would be queued and never parsed.
        Object.assign(writeBuffer, {
          _isSyncWriting: false,
          _writeBuffer: [],
          _callbacks: [],
          _syncCalls: 0,
        });
      }
    }
    : null;
  const pane: Pane = {
    id: req.id,
    pty: p,
    // node-pty's UnixTerminal has an `fd` getter its typings leave out.
    input: new PtyInput((p as unknown as { fd: number }).fd, (data) => p.write(data)),
    term,
    pending: 0,
    paused: false,
    generation: 0,
    bytesIn: 0,
    exited: false,
    deferredDestroy: null,
    drainTimer: null,
    trimmed: 0,
    snapshots: [],
    scrollback,
    parseNow,
    lastDataAt: 0,
    destroyAskedAt: 0,
    throttled: false,
    reportedAt: -Infinity,
    reaped: false,
    disposed: false,
  };
  if (!scrollback) {
    // xterm has no public event for rows dropped off the top of the scrollback;
    // the line list's own onTrim is the only exact count (pinned xterm version).
    // deno-lint-ignore no-explicit-any
    (term as any)._core?.buffers?.normal?.lines?.onTrim?.((n: number) => (pane.trimmed += n));
  }
  panes.set(req.id, pane);
  if (req.session) openSession(req.id, term, req.session);
  guardDrainOnExit(pane);

  term.onTitleChange((title) => emit({ ev: "title", id: pane.id, title }));
  // With `encoding: null` node-pty hands over bytes (its types say string).
  (p.onData as unknown as (fn: (data: Uint8Array) => void) => void)((data) => {
    pane.bytesIn += data.length;
    pane.lastDataAt = performance.now();
    if (parseNow) {
      if (panes.get(pane.id) !== pane) return; // disposed; the PTY is being torn down
      // The PTY is not read again before this returns: that is the flow control.
      parseNow(data);
      if (turnStart === 0) {
        turnStart = performance.now();
        scheduleTurn();
      }
      if (performance.now() - turnStart > TURN_BUDGET_MS && !pane.throttled) {
        pane.throttled = true;
        p.pause();
        throttledPanes.add(pane);
      }
      scrollback?.afterParse();
      pane.generation++;
      markDirty(pane);
      sessionOutput(pane.id, data);
      return;
    }
    pane.pending += data.length;
    if (!pane.paused && pane.pending > HIGH_WATER) {
      pane.paused = true;
      p.pause();
    }
    term.write(data, () => {
      scrollback?.afterParse();
      pane.pending -= data.length;
      pane.generation++;
      markDirty(pane);
      sessionOutput(pane.id, data);
      if (pane.paused && pane.pending < LOW_WATER) {
        pane.paused = false;
        p.resume();
        scheduleDeferredDestroy(pane);
      } else if (pane.pending === 0) {
        // The program may have exited while xterm still had a backlog (without
        // ever pausing): the destroy deferred then must still happen, or the
        // exit is never reported.
        scheduleDeferredDestroy(pane);
      }
    });
  });
  p.onExit(({ exitCode, signal }) => {
    pane.reaped = true;
    const report = () => {
      pane.exited = true;
      flushChanges();
      emit({ ev: "exit", id: pane.id, exit_code: exitCode, signal: signal ?? 0 });
      sessionExited(pane.id);
    };
    // node-pty reports the exit once the PTY is drained; every chunk it
    // delivered is parsed already when parsing is synchronous. Otherwise let
    // xterm finish its queue first, so a reader that sees "exited" also sees
    // the final screen.
    if (parseNow) report();
    else term.write("", report);
  });
  // Answer terminal queries (DA, DSR) the way a terminal would.
  term.onData((data) => {
    if (!pane.exited && !pane.disposed) pane.input.write(data).catch(() => {});
  });
  return { pid: p.pid };
}

/**
 * node-pty closes the PTY master too early in two ways, and we hold it open:
 *
 * - On EIO, which comes as soon as the program has closed its end of the
 *   terminal, often before it has exited. Closing the master hangs the
 *   terminal up, and the kernel sends the program SIGHUP: a `cat` that read
 *   EOF and was about to exit 0 is reported killed by SIGHUP (129). So the
 *   master stays open until the program has been reaped, as a terminal
 *   emulator keeps its window until its child exits.
 * - 200 ms after the program exits unless the socket reached EOF. While we
 *   hold the socket paused for flow control, or while it is still delivering
 *   (a busy worker reads late), that would throw away output still in the
 *   kernel buffer. Defer the destroy until the socket has been flowing and
 *   quiet for {@link DRAIN_QUIET_MS} (a socket that keeps delivering, e.g.
 *   from a background process holding the PTY open, at most
 *   {@link DRAIN_MAX_MS}).
 *
 * A closed pane (`dispose`) is torn down at once: its program got SIGHUP anyway.
 */
function guardDrainOnExit(pane: Pane) {
  // deno-lint-ignore no-explicit-any
  const socket = (pane.pty as any)._socket;
  if (!socket || typeof socket.destroy !== "function") return;
  const destroy = socket.destroy.bind(socket);
  socket.destroy = (...args: unknown[]) => {
    const now = performance.now();
    if (!pane.destroyAskedAt) pane.destroyAskedAt = now;
    // EIO: every byte has been read (the kernel hands out what is buffered first).
    const eof = (args[0] as { code?: string } | undefined)?.code === "EIO";
    const flowing = !eof && now - pane.lastDataAt < DRAIN_QUIET_MS &&
      now - pane.destroyAskedAt < DRAIN_MAX_MS;
    if (!pane.disposed && (mustWait(pane) || flowing || programRunning(pane))) {
      pane.deferredDestroy = () => {
        pane.input.close();
        return destroy(...args);
      };
      if (pane.paused || pane.throttled) return socket; // resuming schedules it
      if (flowing || pane.pending > 0) scheduleDeferredDestroy(pane);
      else awaitExit(pane, EXIT_POLL_MS);
      return socket;
    }
    // The master closes now: its number may be reused by the next open.
    pane.input.close();
    return destroy(...args);
  };
  pane.pty.onData(() => scheduleDeferredDestroy(pane));
}

/** Output is held back (flow control) or still being parsed. */
function mustWait(pane: Pane): boolean {
  return pane.paused || pane.throttled || pane.pending > 0;
}

/**
 * The pane's program has not exited yet (a zombie has: it no longer minds a
 * hang-up). node-pty reports the exit only once the socket is closed, so
 * this asks /proc.
 */
function programRunning(pane: Pane): boolean {
  if (pane.reaped) return false;
  try {
    const stat = Deno.readTextFileSync(`/proc/${pane.pty.pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

function scheduleDeferredDestroy(pane: Pane) {
  if (!pane.deferredDestroy) return;
  if (pane.drainTimer !== null) clearTimeout(pane.drainTimer);
  if (pane.disposed) return destroyDeferred(pane);
  // A socket still flowing long after the exit (a background process holding
  // the PTY) is destroyed anyway, unless we hold it paused.
  const late = pane.parseNow !== null && performance.now() - pane.destroyAskedAt > DRAIN_MAX_MS;
  pane.drainTimer = setTimeout(() => {
    pane.drainTimer = null;
    if (mustWait(pane)) return scheduleDeferredDestroy(pane);
    awaitExit(pane, EXIT_POLL_MS);
  }, late ? 0 : DRAIN_QUIET_MS);
}

/** Destroys the socket once the program has exited: it may have closed its terminal and live on a while. */
function awaitExit(pane: Pane, delay: number) {
  if (!programRunning(pane)) return destroyDeferred(pane);
  pane.drainTimer = setTimeout(() => {
    pane.drainTimer = null;
    if (mustWait(pane)) return scheduleDeferredDestroy(pane);
    awaitExit(pane, Math.min(2 * delay, EXIT_POLL_MAX_MS));
  }, delay);
}

function destroyDeferred(pane: Pane) {
  const destroy = pane.deferredDestroy;
  pane.deferredDestroy = null;
  destroy?.();
}

function mustGet(id: number): Pane {
  const pane = panes.get(id);
  if (!pane) throw new Error(`No pane ${id} in worker`);
  return pane;
}

/** Runs after xterm has parsed everything queued so far. */
function afterWrites<T>(pane: Pane, fn: () => T): Promise<T> {
  if (pane.pending === 0) return Promise.resolve(fn());
  return new Promise((resolve, reject) =>
    pane.term.write("", () => {
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
function clearPane(pane: Pane): Promise<{ generation: number }> {
  const buf = pane.term.buffer.active;
  const y = buf.type === "normal" ? buf.cursorY : 0;
  const seq = `\x1b[3J${y > 0 ? `\x1b[${y}S\x1b[${y}A` : ""}`;
  return new Promise((resolve) =>
    pane.term.write(seq, () => {
      pane.scrollback?.afterParse();
      pane.generation++;
      markDirty(pane);
      resolve({ generation: pane.generation });
    })
  );
}

async function handle(req: WorkerRequest): Promise<unknown> {
  switch (req.op) {
    case "spawn":
      return spawnPane(req);
    case "write": {
      const pane = mustGet(req.id);
      if (pane.exited) throw new Error("exited");
      await pane.input.write(req.data);
      return null;
    }
    case "resize": {
      const pane = mustGet(req.id);
      if (pane.scrollback) pane.scrollback.resize(pane.term, () => pane.term.resize(req.cols, req.rows));
      else pane.term.resize(req.cols, req.rows);
      if (!pane.exited) pane.pty.resize(req.cols, req.rows);
      sessionResized(req.id);
      return null;
    }
    case "kill": {
      const pane = mustGet(req.id);
      if (!pane.exited) {
        try {
          pane.pty.kill(req.signal);
        } catch { /* already gone */ }
      }
      return null;
    }
    case "dispose": {
      const pane = panes.get(req.id);
      if (!pane) return null;
      panes.delete(req.id);
      sessionDisposed(req.id);
      dirty.delete(req.id);
      throttledPanes.delete(pane);
      pane.disposed = true;
      // Nothing is written into a closed pane, not even what was queued.
      pane.input.close();
      if (!pane.exited) {
        try {
          pane.pty.kill("SIGHUP");
        } catch { /* already gone */ }
      }
      pane.term.dispose();
      // Its parser callbacks never come now: nothing may wait for them.
      if (pane.paused || pane.throttled) pane.pty.resume();
      pane.paused = pane.throttled = false;
      pane.pending = 0;
      scheduleDeferredDestroy(pane);
      return null;
    }
    case "read": {
      const pane = mustGet(req.id);
      return await afterWrites(pane, () => read(pane, req.lines, req.offset, req.since, req.join));
    }
    case "search": {
      const pane = mustGet(req.id);
      return await afterWrites(pane, () => ({
        hits: searchLines(buffer(pane), req.pattern, req.max),
        generation: pane.generation,
      }));
    }
    case "session":
      return await sessionCall(req.id, req.call);
    case "clear": {
      const pane = mustGet(req.id);
      return await afterWrites(pane, () => clearPane(pane));
    }
    case "stats":
      return { heap_used: Deno.memoryUsage().heapUsed, panes: panes.size };
    case "modes": {
      const pane = mustGet(req.id);
      return await afterWrites(pane, () => ({
        ...snapshotModes(pane.term),
        generation: pane.generation,
        bytes_in: pane.bytesIn,
      }));
    }
    case "screen": {
      const pane = mustGet(req.id);
      return await afterWrites(pane, () =>
        serializeScreen(pane.term, {
          scrollback: req.scrollback,
          generation: pane.generation,
          older: (n) => olderRows(pane, n),
        }));
    }
  }
}

scope.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const req = e.data;
  try {
    const result = await handle(req);
    post({ rid: req.rid, ok: true, result }, req.op === "session" ? transferOf(result) : []);
    // The snapshot for a later `read --since` is taken after the reply has
    // gone (the reader does not wait for the hashing) but in the same task,
    // so no output can be parsed in between: it is exactly the state read.
    if (req.op === "read") {
      const pane = panes.get(req.id);
      if (pane) remember(pane);
    }
  } catch (err) {
    post({ rid: req.rid, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
};
