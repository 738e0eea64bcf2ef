/**
 * The main thread's handle on the pane workers: spreads panes over a few
 * workers and turns their message passing into promises.
 *
 * @module
 */
import {
  CHANGE_FLUSH_MS,
  type ModesResult,
  type OpName,
  type OpRequest,
  type OpResult,
  type ReadResult,
  type RecycleMessage,
  type ScreenResult,
  type SearchResult,
  type SpawnerMessage,
  type SpawnRequest,
  type WatchedMessage,
  type WorkerBatch,
  type WorkerEvent,
  type WorkerReply,
  type WorkerRequest,
  type WorkerStats,
} from "./worker_api.ts";
import { RpcError } from "../../errors.ts";
import { fromFailure, isPaneError, PaneError, PaneErrorCode } from "./errors.ts";
import { spawnerWorker } from "./spawner.ts";
import { quietReleaser } from "./release.ts";
import type { SessionCall, SessionResults } from "../session/worker_api.ts";
import { ErrorCode, ErrorReason } from "../../spec/codes.ts";

interface Slot {
  worker: Worker;
  panes: number;
  /** Requests posted to the worker and not yet taken by it (shared memory, see `WatchedMessage`). */
  requests: Int32Array;
  /** Set when the worker failed: its panes are gone, it takes no more. */
  failed?: string;
  /** What the worker was last told: someone watches output of its panes (see `PanePool.watch`). */
  watched: boolean;
  /** Tells it nobody does any more, a moment after the last such watcher went. */
  unwatchTimer: ReturnType<typeof setTimeout> | null;
}

/**
 * How long a request to a worker may take before the caller is told so
 * (writes excepted: they have their own stall deadline in the worker).
 */
export const WORKER_REQUEST_MS = 30_000;
/** A spawn may also wait for a fresh worker to load (and, under `deno test`, type-check) its module. */
const SPAWN_MS = 180_000;

/**
 * A pane counts as quiet, and its last read as current, once its newest
 * `changed` report is this old: any output parsed before that report's
 * flush window ended has been reported by then, and later output is
 * reported at once (so only the worker-to-main hop is left).
 */
const QUIET_MS = 2 * CHANGE_FLUSH_MS;
/** How long after the last watcher goes the workers are told nobody watches. */
const UNWATCH_DELAY_MS = 1000;
/** Plain reads kept per pane (different line counts, offsets or joining). */
const READS_KEPT = 4;

/** What the main thread knows of a pane's screen without asking its worker. */
interface PaneView {
  /** The newest generation the worker reported, and when it arrived. */
  generation: number;
  reportedAt: number;
  /** Bumped by every resize: a rewrap changes the screen without output. */
  epoch: number;
  /**
   * The newest plain reads (no `since`) by their parameters, all of one
   * generation (a script's 200 lines and the agent tracker's screen);
   * a resize drops them.
   */
  reads: Map<string, ReadResult>;
  /** Output the worker has reported for it (bytes): what this thread's garbage grows with. */
  bytesIn: number;
}

/** A pool of pane workers. */
export class PanePool {
  #slots: Slot[] = [];
  /** Starts the workers' programs at the host's priority (./spawner.ts). */
  #spawner: Worker;
  #home = new Map<number, Slot>();
  #waiting = new Map<
    number,
    {
      slot: Slot;
      resolve: (v: OpResult<OpName>) => void;
      reject: (e: Error) => void;
      timer?: ReturnType<typeof setTimeout>;
    }
  >();
  #rid = 0;
  #views = new Map<number, PaneView>();
  /**
   * This thread's share of a flood (events, replies, screens read) is
   * handed back once the host is quiet, never in the middle of traffic:
   * here a collection would hold up every client (./release.ts).
   */
  #releaser = quietReleaser();

  /** Who hears what panes report (see {@link listen}). */
  #listeners = new Set<(ev: WorkerEvent) => void>();
  #log: (line: string) => void;
  /** Clients watching every pane's output live (see {@link watch}). */
  #watchingAll = 0;
  /** Clients watching some panes' output live: how many watch each pane. */
  #watchedPanes = new Map<number, number>();
  /** How many workers have a watched pane beside panes nobody watches, in memory every worker reads (see `WatchedMessage`). */
  #mixedWatched = new Int32Array(new SharedArrayBuffer(4));

  /**
   * Starts `size` workers; listeners ({@link listen}) hear what panes report.
   * A worker that fails (an uncaught exception on its data path) fails alone:
   * its panes exit (reported to the listeners and `log`), its pending requests
   * fail, a fresh worker takes its place, and the host and other panes go on.
   */
  constructor(
    size: number,
    log: (line: string) => void = (line) => console.error(`paneflow: ${line}`),
  ) {
    this.#log = log;
    this.#spawner = spawnerWorker();
    this.#spawner.onerror = (e: ErrorEvent) => {
      e.preventDefault(); // not the host's end; the workers' spawns fail with their own error
      this.#log(`the spawner failed: ${e.message}`);
    };
    for (let i = 0; i < size; i++) this.#slots.push(this.#startWorker());
  }

  /** Hears every event panes report, in the order they come, until the returned function is called. */
  listen(fn: (ev: WorkerEvent) => void): () => void {
    this.#listeners.add(fn);
    return () => void this.#listeners.delete(fn);
  }

  #emit(ev: WorkerEvent): void {
    for (const fn of this.#listeners) fn(ev);
  }

  #startWorker(): Slot {
    const worker = new Worker(new URL("./worker.ts", import.meta.url).href, {
      type: "module",
    });
    const requests = new Int32Array(new SharedArrayBuffer(4));
    const slot: Slot = { worker, panes: 0, requests, watched: this.#watchingAll > 0, unwatchTimer: null };
    const event = (ev: WorkerEvent) => {
      if (ev.ev === "changed") {
        this.#saw(ev.id, ev.generation);
        this.#churn(ev.id, ev.bytes_in);
      }
      this.#emit(ev);
    };
    worker.onmessage = (e: MessageEvent<WorkerReply | WorkerEvent | WorkerBatch>) => {
      const msg = e.data;
      if (Array.isArray(msg)) return msg.forEach(event);
      if ("ev" in msg) return event(msg);
      const waiter = this.#waiting.get(msg.rid);
      if (!waiter) return;
      this.#waiting.delete(msg.rid);
      clearTimeout(waiter.timer);
      if (msg.ok) waiter.resolve(msg.result);
      else waiter.reject(fromFailure(msg.error));
    };
    worker.onerror = (e: ErrorEvent) => {
      e.preventDefault(); // not the host's end
      this.#fail(slot, e.message || "uncaught error");
    };
    worker.onmessageerror = () => this.#fail(slot, "a message could not be read");
    worker.postMessage(
      {
        watched: slot.watched,
        requests: requests.buffer,
        mixedWatched: this.#mixedWatched.buffer,
      } satisfies WatchedMessage,
    );
    const { port1, port2 } = new MessageChannel();
    this.#spawner.postMessage({ port: port1 }, [port1]);
    worker.postMessage({ spawner: port2 } satisfies SpawnerMessage, [port2]);
    return slot;
  }

  /** A worker failed: see the constructor. */
  #fail(slot: Slot, why: string): void {
    if (slot.failed) return;
    slot.failed = why;
    const ids = [...this.#home].filter(([, s]) => s === slot).map(([id]) => id);
    this.#log(`pane worker failed (${why}); its panes end: ${ids.join(", ") || "none"}`);
    try {
      slot.worker.terminate();
    } catch { /* gone */ }
    for (const [rid, w] of this.#waiting) {
      if (w.slot !== slot) continue;
      this.#waiting.delete(rid);
      clearTimeout(w.timer);
      w.reject(new PaneError(PaneErrorCode.WorkerFailed, `the pane's worker failed: ${why}`));
    }
    const i = this.#slots.indexOf(slot);
    if (i >= 0) this.#slots[i] = this.#startWorker();
    for (const id of ids) {
      this.#home.delete(id);
      this.#views.delete(id);
      this.#emit({ ev: "exit", id, exit_code: -1, signal: 0 });
    }
  }

  /**
   * Counts a client that watches output live (an events subscriber for
   * `surface_changed`, ptywright notifications, a pending `session.wait`) of
   * the panes `ids`, or of every pane (null); returns its release. The
   * workers of watched panes rest between flood turns so that output, pings
   * and events find a free core, and new panes start on other workers
   * ({@link #placement}); the other workers parse their floods flat out, but
   * pace the plain-text floods they hold while a watched pane shares its
   * worker with panes nobody watches (./panes.ts `pacesHeld`).
   */
  watch(ids: Iterable<number> | null = null): () => void {
    const only = ids ? [...ids] : null;
    if (only) { for (const id of only) this.#watchedPanes.set(id, (this.#watchedPanes.get(id) ?? 0) + 1); }
    else this.#watchingAll++;
    this.#tellWatched();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (!only) this.#watchingAll--;
      else {
        for (const id of only) {
          const n = this.#watchedPanes.get(id)! - 1;
          if (n > 0) this.#watchedPanes.set(id, n);
          else this.#watchedPanes.delete(id);
        }
      }
      this.#tellWatched();
    };
  }

  /**
   * Tells each worker whether output of its panes is watched: at once when
   * it becomes so; a moment after its last watcher went when it stops being
   * so, so a client that waits again and again (a script's `session.wait`s)
   * does not toggle it with two messages per wait.
   */
  #tellWatched(): void {
    const wanted = this.#watchedSlots();
    // Floods on other workers are paced only while a watched pane shares its worker with panes
    // nobody watches: its output then waits behind their chunks, and the cores' headroom is what
    // lets it be read between them (./panes.ts `pacesHeld`). A watched pane on a worker of its
    // own is read as it comes, and the others parse flat out.
    let mixed = 0;
    for (const [slot, n] of wanted) if (slot.panes > n) mixed++;
    Atomics.store(this.#mixedWatched, 0, mixed);
    for (const slot of this.#slots) {
      if (slot.failed) continue;
      if (wanted.has(slot)) {
        if (slot.unwatchTimer !== null) clearTimeout(slot.unwatchTimer);
        slot.unwatchTimer = null;
        if (!slot.watched) slot.worker.postMessage({ watched: slot.watched = true } satisfies WatchedMessage);
      } else if (slot.watched && slot.unwatchTimer === null) {
        slot.unwatchTimer = setTimeout(() => {
          slot.unwatchTimer = null;
          if (!slot.failed) {
            slot.worker.postMessage({ watched: slot.watched = false } satisfies WatchedMessage);
          }
        }, UNWATCH_DELAY_MS);
        Deno.unrefTimer(slot.unwatchTimer);
      }
    }
  }

  /** The workers of panes someone watches, each with how many of its panes are watched. */
  #watchedSlots(): Map<Slot, number> {
    const out = new Map<Slot, number>();
    if (this.#watchingAll > 0) {
      for (const slot of this.#slots) out.set(slot, slot.panes);
      return out;
    }
    for (const id of this.#watchedPanes.keys()) {
      const slot = this.#home.get(id);
      if (slot) out.set(slot, (out.get(slot) ?? 0) + 1);
    }
    return out;
  }

  /** Hands an encoded answer's buffer back to pane `id`'s worker, which made it (see `RawBuffers`). */
  recycle(id: number, buffer: ArrayBuffer): void {
    this.#home.get(id)?.worker.postMessage({ recycle: buffer } satisfies RecycleMessage, [buffer]);
  }

  /** Test-only: sends a message the worker cannot handle, so it fails (tests of {@link #fail}). */
  poison(id: number): void {
    this.#home.get(id)?.worker.postMessage(null);
  }

  /** Each live worker's heap and pane count (`system.stats`). */
  async stats(): Promise<WorkerStats[]> {
    const all = await Promise.allSettled(this.#slots.map((slot) => this.#send(slot, { op: "stats" }, 5000)));
    return all.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
  }

  /**
   * Notes a generation the worker reported, in a `changed` event or in a
   * reply: a reply may show output whose event has not come yet, and a
   * later plain read must not answer with an older screen than a client
   * has already seen. Reads kept from older generations are dropped.
   */
  #saw(id: number, generation: number): void {
    const view = this.#views.get(id);
    if (!view || generation <= view.generation) return;
    view.generation = generation;
    view.reportedAt = performance.now();
    view.reads.clear();
  }

  /** Counts the pane's new output toward this thread's release (./release.ts). */
  #churn(id: number, bytesIn: number): void {
    const view = this.#views.get(id);
    if (!view || bytesIn <= view.bytesIn) return;
    this.#releaser.churn(bytesIn - view.bytesIn, performance.now());
    view.bytesIn = bytesIn;
  }

  /** Sends `op` to the pane's worker; the reply's generation is noted. */
  async #ask<K extends "read" | "search" | "modes" | "screen" | "clear">(
    id: number,
    op: OpRequest<K>,
  ): Promise<OpResult<K>> {
    const result = await this.#to(id, op);
    this.#saw(id, result.generation);
    return result;
  }

  #send<K extends OpName>(
    slot: Slot,
    op: OpRequest<K>,
    ms = op.op === "write" ? 0 : op.op === "spawn" ? SPAWN_MS : WORKER_REQUEST_MS,
  ): Promise<OpResult<K>> {
    if (slot.failed) {
      return Promise.reject(
        new PaneError(PaneErrorCode.WorkerFailed, `the pane's worker failed: ${slot.failed}`),
      );
    }
    const rid = ++this.#rid;
    return new Promise<OpResult<K>>((resolve, reject) => {
      const waiter = {
        slot,
        // The reply with this rid answers this op: its result is op K's.
        resolve: resolve as (v: OpResult<OpName>) => void,
        reject,
        timer: undefined as undefined | ReturnType<typeof setTimeout>,
      };
      if (ms > 0) {
        waiter.timer = setTimeout(() => {
          if (!this.#waiting.delete(rid)) return;
          reject(
            new PaneError(
              PaneErrorCode.NoAnswer,
              `the pane's worker did not answer ${op.op} within ${ms / 1000} s`,
            ),
          );
        }, ms);
      }
      this.#waiting.set(rid, waiter);
      Atomics.add(slot.requests, 0, 1);
      slot.worker.postMessage({ ...op, rid } as WorkerRequest);
    });
  }

  #to<K extends OpName>(id: number, op: OpRequest<K>): Promise<OpResult<K>> {
    const slot = this.#home.get(id);
    if (!slot) return Promise.reject(new PaneError(PaneErrorCode.NoPane, `Pane ${id} has no worker`));
    return this.#send(slot, op);
  }

  /**
   * The worker a new pane starts on: the one with the fewest panes, but not
   * one whose panes someone watches while another worker has none watched.
   * A worker reads and parses its panes one chunk after another, so output
   * of a watched pane waits behind every flood of its worker; on a worker of
   * its own it is read as it comes, several times sooner (docs/performance.md,
   * "Figures behind constants in the code").
   */
  #placement(): Slot {
    const live = this.#slots.filter((s) => !s.failed);
    const watched = this.#watchedSlots();
    const free = live.filter((s) => !watched.has(s));
    return (free.length > 0 ? free : live).reduce((a, b) => (b.panes < a.panes ? b : a));
  }

  /** Starts a program in a new PTY on a worker (see {@link #placement}). */
  async spawn(opts: SpawnRequest): Promise<{ pid: number }> {
    const slot = this.#placement();
    slot.panes++;
    this.#home.set(opts.id, slot);
    if (this.#watchingAll > 0 || this.#watchedPanes.size > 0) this.#tellWatched();
    this.#views.set(opts.id, {
      generation: 0,
      reportedAt: -Infinity,
      epoch: 0,
      reads: new Map(),
      bytesIn: 0,
    });
    try {
      return await this.#send(slot, { op: "spawn", ...opts });
    } catch (e) {
      slot.panes--;
      this.#home.delete(opts.id);
      this.#views.delete(opts.id);
      throw e;
    }
  }

  /** Writes into the pane's PTY; resolves once the program has taken every byte. */
  write(id: number, data: string): Promise<void> {
    return this.#to(id, { op: "write", id, data }).then(() => {}, (e: unknown) => {
      if (isPaneError(e, PaneErrorCode.Stalled)) {
        throw new RpcError(ErrorCode.Backpressure, `Pane ${id}: ${e.message}`, {
          reason: ErrorReason.InputStalled,
        }, { cause: e });
      }
      if (isPaneError(e, PaneErrorCode.Exited)) {
        throw new RpcError(ErrorCode.InvalidParams, `Pane ${id} exited while being written to`, {
          reason: ErrorReason.Exited,
        }, { cause: e });
      }
      throw e;
    });
  }
  resize(id: number, cols: number, rows: number): Promise<void> {
    const view = this.#views.get(id);
    if (view) {
      view.epoch++;
      view.reads.clear();
    }
    return this.#to(id, { op: "resize", id, cols, rows }).then(() => {});
  }
  kill(id: number, signal = "SIGHUP"): Promise<void> {
    return this.#to(id, { op: "kill", id, signal }).then(() => {});
  }
  /**
   * Reads a pane's rows. A plain read of a quiet pane whose generation has
   * not moved since the same read is answered from that read, without
   * waking the worker: an idle pane polled by a script or an agent costs
   * the host a map lookup (bench/: a one-shot `paneflow read` ~1 ms faster).
   */
  async read(id: number, lines: number, offset: number, since?: number, join?: boolean): Promise<ReadResult> {
    const view = this.#views.get(id);
    if (!view || since !== undefined) return this.#ask(id, { op: "read", id, lines, offset, since, join });
    const key = `${lines}:${offset}:${join ? 1 : 0}`;
    const kept = view.reads.get(key);
    if (kept?.generation === view.generation && performance.now() - view.reportedAt >= QUIET_MS) return kept;
    const epoch = view.epoch;
    const result = await this.#ask(id, { op: "read", id, lines, offset, join });
    // Kept only if it is of the newest generation seen and no resize came in between.
    if (view.epoch !== epoch || result.generation !== view.generation) return result;
    view.reads.delete(key);
    view.reads.set(key, result);
    if (view.reads.size > READS_KEPT) view.reads.delete(view.reads.keys().next().value!);
    return result;
  }
  search(id: number, pattern: string, max: number): Promise<SearchResult> {
    return this.#ask(id, { op: "search", id, pattern, max });
  }
  modes(id: number): Promise<ModesResult> {
    return this.#ask(id, { op: "modes", id });
  }
  /** A ptywright session call (src/core/session/worker_api.ts) to the pane's worker; its result is the call kind's. */
  session<C extends SessionCall>(id: number, call: C): Promise<SessionResults[C["kind"]]> {
    // The worker answers a call with its kind's result (src/core/session/engine.ts's sessionCall).
    return this.#to(id, { op: "session", id, call }) as Promise<SessionResults[C["kind"]]>;
  }
  /** The pane's screen as ANSI (surface.screen, ./screen_state.ts). */
  screen(id: number, scrollback: number): Promise<ScreenResult> {
    return this.#ask(id, { op: "screen", id, scrollback });
  }
  /** Clears the pane's scrollback and the screen above its cursor row (emulator side). */
  clear(id: number): Promise<{ generation: number }> {
    return this.#ask(id, { op: "clear", id });
  }

  /** Kills the pane's program (SIGHUP) and frees its terminal. */
  async dispose(id: number): Promise<void> {
    const slot = this.#home.get(id);
    if (!slot) return;
    await this.#send(slot, { op: "dispose", id });
    this.#releaser.closedPane(performance.now());
    slot.panes--;
    this.#home.delete(id);
    this.#views.delete(id);
    if (this.#watchingAll > 0 || this.#watchedPanes.size > 0) this.#tellWatched();
  }

  /** Stops every worker; pending requests fail. */
  terminate(): void {
    for (const slot of this.#slots) if (slot.unwatchTimer !== null) clearTimeout(slot.unwatchTimer);
    this.#releaser.stop();
    for (const slot of this.#slots) slot.worker.terminate();
    this.#spawner.terminate();
    for (const waiter of this.#waiting.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(new PaneError(PaneErrorCode.Stopping, "Host is stopping"));
    }
    this.#waiting.clear();
  }
}
