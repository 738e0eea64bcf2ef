/**
 * The main thread's handle on the pane workers: spreads panes over a few
 * workers and turns their message passing into promises.
 *
 * @module
 */
import type {
  ModesResult,
  ReadResult,
  SearchHit,
  WorkerEvent,
  WorkerReply,
  WorkerRequest,
} from "./_worker_protocol.ts";

// deno-lint-ignore no-explicit-any
type DistributiveOmit<T, K extends keyof any> = T extends unknown ? Omit<T, K> : never;
type Op = DistributiveOmit<WorkerRequest, "rid">;
type SpawnOp = Extract<Op, { op: "spawn" }>;

interface Slot {
  worker: Worker;
  panes: number;
}

/** A pool of pane workers. */
export class PanePool {
  #slots: Slot[] = [];
  #home = new Map<number, Slot>();
  #waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  #rid = 0;

  /** Starts `size` workers; `onEvent` receives what panes report. */
  constructor(size: number, onEvent: (ev: WorkerEvent) => void) {
    for (let i = 0; i < size; i++) {
      const worker = new Worker(new URL("./pane_worker.ts", import.meta.url).href, {
        type: "module",
      });
      worker.onmessage = (e: MessageEvent<WorkerReply | WorkerEvent>) => {
        const msg = e.data;
        if ("ev" in msg) return onEvent(msg);
        const waiter = this.#waiting.get(msg.rid);
        if (!waiter) return;
        this.#waiting.delete(msg.rid);
        if (msg.ok) waiter.resolve(msg.result);
        else waiter.reject(new Error(msg.error));
      };
      this.#slots.push({ worker, panes: 0 });
    }
  }

  #send<T>(slot: Slot, op: Op): Promise<T> {
    const rid = ++this.#rid;
    return new Promise<T>((resolve, reject) => {
      this.#waiting.set(rid, { resolve: resolve as (v: unknown) => void, reject });
      slot.worker.postMessage({ ...op, rid } as WorkerRequest);
    });
  }

  #to<T>(id: number, op: Op): Promise<T> {
    const slot = this.#home.get(id);
    if (!slot) return Promise.reject(new Error(`Pane ${id} has no worker`));
    return this.#send<T>(slot, op);
  }

  /** Starts a program in a new PTY on the least busy worker. */
  async spawn(opts: Omit<SpawnOp, "op">): Promise<{ pid: number }> {
    const slot = this.#slots.reduce((a, b) => (b.panes < a.panes ? b : a));
    slot.panes++;
    this.#home.set(opts.id, slot);
    try {
      return await this.#send(slot, { op: "spawn", ...opts });
    } catch (e) {
      slot.panes--;
      this.#home.delete(opts.id);
      throw e;
    }
  }

  write(id: number, data: string): Promise<void> {
    return this.#to(id, { op: "write", id, data });
  }
  resize(id: number, cols: number, rows: number): Promise<void> {
    return this.#to(id, { op: "resize", id, cols, rows });
  }
  kill(id: number, signal = "SIGHUP"): Promise<void> {
    return this.#to(id, { op: "kill", id, signal });
  }
  read(id: number, lines: number, offset: number, since?: number, join?: boolean): Promise<ReadResult> {
    return this.#to(id, { op: "read", id, lines, offset, since, join });
  }
  search(id: number, pattern: string, max: number): Promise<SearchHit[]> {
    return this.#to(id, { op: "search", id, pattern, max });
  }
  modes(id: number): Promise<ModesResult> {
    return this.#to(id, { op: "modes", id });
  }

  /** Kills the pane's program (SIGHUP) and frees its terminal. */
  async dispose(id: number): Promise<void> {
    const slot = this.#home.get(id);
    if (!slot) return;
    await this.#send(slot, { op: "dispose", id });
    slot.panes--;
    this.#home.delete(id);
  }

  /** Stops every worker; pending requests fail. */
  terminate(): void {
    for (const slot of this.#slots) slot.worker.terminate();
    for (const waiter of this.#waiting.values()) waiter.reject(new Error("Host is stopping"));
    this.#waiting.clear();
  }
}
