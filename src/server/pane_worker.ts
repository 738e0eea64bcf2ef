/**
 * Pane worker: owns PTYs and their headless terminals, off the socket's
 * thread. node-pty reads on the main thread starve the event loop (20 busy
 * panes gave `system.ping` p99 1.3 s); here they only slow each other.
 *
 * The main thread talks to it with {@link WorkerRequest} messages and gets
 * {@link WorkerReply} and {@link WorkerEvent} messages back.
 *
 * Flow control: the PTY is paused while more than {@link HIGH_WATER} bytes
 * wait in xterm's write queue and resumed below {@link LOW_WATER}, so xterm
 * never discards data and a flood cannot grow memory without bound.
 *
 * @module
 */
import pty from "@lydell/node-pty";
import xterm from "@xterm/headless";
import type { ReadResult, WorkerEvent, WorkerReply, WorkerRequest } from "./_worker_protocol.ts";
import {
  type BufferLike,
  changedSince,
  readLines,
  searchLines,
  type Snapshot,
  snapshotModes,
  takeSnapshot,
} from "./screen.ts";

const HIGH_WATER = 2 * 1024 * 1024;
const LOW_WATER = 256 * 1024;
/** How often dirty panes report their new output generation. */
const CHANGE_FLUSH_MS = 4;
/** Quiet time before a socket whose process exited is destroyed. */
const DRAIN_QUIET_MS = 200;
/** Snapshots kept per pane for `read --since`. */
const SNAPSHOTS_KEPT = 16;

interface Pane {
  id: number;
  pty: pty.IPty;
  term: xterm.Terminal;
  pending: number;
  paused: boolean;
  generation: number;
  bytesIn: number;
  exited: boolean;
  deferredDestroy: (() => void) | null;
  drainTimer: ReturnType<typeof setTimeout> | null;
  /** Rows trimmed off the top of the normal buffer since the start. */
  trimmed: number;
  snapshots: Snapshot[];
}

/** The worker's global scope (the default lib types `self` as a window). */
const scope = self as unknown as {
  postMessage(msg: unknown): void;
  onmessage: ((e: MessageEvent<WorkerRequest>) => void) | null;
};

const panes = new Map<number, Pane>();
const dirty = new Set<number>();
let flushTimer: ReturnType<typeof setTimeout> | null = null;

function post(msg: WorkerReply | WorkerEvent) {
  scope.postMessage(msg);
}

function markDirty(pane: Pane) {
  dirty.add(pane.id);
  if (flushTimer === null) {
    flushTimer = setTimeout(flushChanges, CHANGE_FLUSH_MS);
  }
}

function flushChanges() {
  flushTimer = null;
  for (const id of dirty) {
    const pane = panes.get(id);
    if (pane) {
      post({ ev: "changed", id, generation: pane.generation, bytes_in: pane.bytesIn });
    }
  }
  dirty.clear();
}

function spawnPane(req: Extract<WorkerRequest, { op: "spawn" }>): { pid: number } {
  const term = new xterm.Terminal({
    cols: req.cols,
    rows: req.rows,
    scrollback: req.scrollback,
    allowProposedApi: true,
    // xterm logs every parse error; a pane printing binary would write ~5x its
    // output into the host's log.
    logLevel: "off",
  });
  const p = pty.spawn(req.file, req.args, {
    name: "xterm-256color",
    cols: req.cols,
    rows: req.rows,
    cwd: req.cwd,
    env: req.env,
  });
  const pane: Pane = {
    id: req.id,
    pty: p,
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
  };
  // xterm has no public event for rows dropped off the top of the scrollback;
  // the line list's own onTrim is the only exact count (pinned xterm version).
  // deno-lint-ignore no-explicit-any
  (term as any)._core?.buffers?.normal?.lines?.onTrim?.((n: number) => (pane.trimmed += n));
  panes.set(req.id, pane);
  guardDrainOnExit(pane);

  term.onTitleChange((title) => post({ ev: "title", id: pane.id, title }));
  p.onData((data) => {
    pane.pending += data.length;
    pane.bytesIn += data.length;
    if (!pane.paused && pane.pending > HIGH_WATER) {
      pane.paused = true;
      p.pause();
    }
    term.write(data, () => {
      pane.pending -= data.length;
      pane.generation++;
      markDirty(pane);
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
    // Let xterm finish every queued write before reporting the exit, so a
    // reader that sees "exited" also sees the final screen.
    term.write("", () => {
      pane.exited = true;
      flushChanges();
      post({ ev: "exit", id: pane.id, exit_code: exitCode, signal: signal ?? 0 });
    });
  });
  // Answer terminal queries (DA, DSR) the way a terminal would.
  term.onData((data) => {
    if (!pane.exited) p.write(data);
  });
  return { pid: p.pid };
}

/**
 * node-pty destroys the PTY socket 200 ms after the child exits unless it
 * reached EOF. While we hold the socket paused for flow control that would
 * throw away output still in the kernel buffer. Defer the destroy until the
 * socket has been flowing and quiet for {@link DRAIN_QUIET_MS}.
 */
function guardDrainOnExit(pane: Pane) {
  // deno-lint-ignore no-explicit-any
  const socket = (pane.pty as any)._socket;
  if (!socket || typeof socket.destroy !== "function") return;
  const destroy = socket.destroy.bind(socket);
  socket.destroy = (...args: unknown[]) => {
    if (pane.paused || pane.pending > 0) {
      pane.deferredDestroy = () => destroy(...args);
      return socket;
    }
    return destroy(...args);
  };
  pane.pty.onData(() => scheduleDeferredDestroy(pane));
}

function scheduleDeferredDestroy(pane: Pane) {
  if (!pane.deferredDestroy) return;
  if (pane.drainTimer !== null) clearTimeout(pane.drainTimer);
  pane.drainTimer = setTimeout(() => {
    pane.drainTimer = null;
    if (pane.paused || pane.pending > 0) return scheduleDeferredDestroy(pane);
    const destroy = pane.deferredDestroy;
    pane.deferredDestroy = null;
    destroy?.();
  }, DRAIN_QUIET_MS);
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

function buffer(pane: Pane): BufferLike {
  return pane.term.buffer.active;
}

function trimmedOf(pane: Pane): number {
  return pane.term.buffer.active.type === "normal" ? pane.trimmed : 0;
}

function remember(pane: Pane): void {
  const last = pane.snapshots.at(-1);
  if (last && last.generation === pane.generation) return;
  const buf = pane.term.buffer.active;
  pane.snapshots.push(takeSnapshot(buf, pane.generation, trimmedOf(pane), pane.term.rows));
  if (pane.snapshots.length > SNAPSHOTS_KEPT) pane.snapshots.shift();
}

function read(pane: Pane, lines: number, offset: number, since?: number): ReadResult {
  const buf = pane.term.buffer.active;
  let result: ReadResult;
  if (since === undefined) {
    result = { ...readLines(buf, lines, offset), generation: pane.generation };
  } else {
    const snap = pane.snapshots.find((s) => s.generation === since && s.bufferType === buf.type);
    if (snap) {
      const { changed, total_lines, truncated } = changedSince(buf, trimmedOf(pane), snap, lines);
      result = {
        lines: changed.map((c) => c.text),
        changed,
        total_lines,
        eof: !truncated,
        out_of_range: false,
        generation: pane.generation,
        reset: false,
      };
    } else {
      const full = readLines(buf, lines, 0);
      const first = full.total_lines - full.lines.length;
      result = {
        ...full,
        changed: full.lines.map((text, i) => ({ line: first + i + 1, text })),
        generation: pane.generation,
        reset: true,
      };
    }
  }
  remember(pane);
  return result;
}

async function handle(req: WorkerRequest): Promise<unknown> {
  switch (req.op) {
    case "spawn":
      return spawnPane(req);
    case "write": {
      const pane = mustGet(req.id);
      if (pane.exited) throw new Error("exited");
      pane.pty.write(req.data);
      return null;
    }
    case "resize": {
      const pane = mustGet(req.id);
      pane.term.resize(req.cols, req.rows);
      if (!pane.exited) pane.pty.resize(req.cols, req.rows);
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
      dirty.delete(req.id);
      if (!pane.exited) {
        try {
          pane.pty.kill("SIGHUP");
        } catch { /* already gone */ }
      }
      pane.term.dispose();
      return null;
    }
    case "read": {
      const pane = mustGet(req.id);
      return await afterWrites(pane, () => read(pane, req.lines, req.offset, req.since));
    }
    case "search": {
      const pane = mustGet(req.id);
      return await afterWrites(
        pane,
        () => searchLines(buffer(pane), req.pattern, req.max),
      );
    }
    case "modes": {
      const pane = mustGet(req.id);
      return await afterWrites(pane, () => ({
        ...snapshotModes(pane.term),
        generation: pane.generation,
        bytes_in: pane.bytesIn,
      }));
    }
  }
}

scope.onmessage = async (e: MessageEvent<WorkerRequest>) => {
  const req = e.data;
  try {
    const result = await handle(req);
    post({ rid: req.rid, ok: true, result });
  } catch (err) {
    post({ rid: req.rid, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
};
