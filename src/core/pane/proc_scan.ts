/**
 * Process detection's /proc reads, off the main thread: a scan of 100 panes
 * reads /proc/<pid>/stat of every process on the machine, and done on the
 * main thread (even with async reads, one op each) it was a third of the
 * host's main-thread time under the soak's load (bench/host_profile.ts).
 * The same worker reads the process table a closed pane's reaping scans
 * (../../isolation/reap.ts). {@link ProcScanner} sends each scan to one
 * worker (./proc_worker.ts) and falls back to reading inline when the
 * worker cannot run or fails.
 *
 * @module
 */
import { foregroundMembers, type ProcessInfo } from "./proc.ts";
import { type ProcessEntry, readProcessTable } from "../isolation/reap.ts";

/** A scan request: each pid is a PTY session leader; or the whole process table. */
export type ProcRequest = ProcAsk & { rid: number };
type ProcAsk = { kind: "members"; pids: number[]; quick: boolean } | { kind: "table" };

/** A scan's answer: `foregroundMembers` as entries, the process table, or what failed. */
export type ProcReply =
  | { rid: number; members: [number, ProcessInfo[] | null][]; table?: undefined; error?: undefined }
  | { rid: number; table: ProcessEntry[]; members?: undefined; error?: undefined }
  | { rid: number; error: string; members?: undefined; table?: undefined };

/** How long a scan may take in the worker before it is read inline instead. */
const SCAN_DEADLINE_MS = 5000;

/** Foreground process groups of panes, read by a worker. */
export class ProcScanner {
  #worker: Worker | null = null;
  /** No worker (it could not start, it failed, or the scanner was closed): read inline. */
  #inline = false;
  #rid = 0;
  #waiting = new Map<number, (reply: ProcReply | null) => void>();

  /** Each PTY's foreground group members, by its leader's pid (see `foregroundMembers`). */
  async members(pids: number[], quick = false): Promise<Map<number, ProcessInfo[] | null>> {
    if (!pids.length) return new Map();
    const r = await this.#ask({ kind: "members", pids, quick });
    return r?.members ? new Map(r.members) : foregroundMembers(pids, quick);
  }

  /** Every process with its session, group and paneflow tags (see `readProcessTable`). */
  async table(): Promise<ProcessEntry[]> {
    return (await this.#ask({ kind: "table" }))?.table ?? readProcessTable();
  }

  /** The worker's answer, or null when there is none (no worker, it failed, or it took too long). */
  #ask(req: ProcAsk): Promise<ProcReply | null> {
    const worker = this.#ensure();
    if (!worker) return Promise.resolve(null);
    const rid = ++this.#rid;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#settle(rid, null), SCAN_DEADLINE_MS);
      this.#waiting.set(rid, (r) => {
        clearTimeout(timer);
        resolve(r);
      });
      worker.postMessage({ rid, ...req } satisfies ProcRequest);
    });
  }

  #settle(rid: number, reply: ProcReply | null): void {
    const done = this.#waiting.get(rid);
    this.#waiting.delete(rid);
    done?.(reply?.error === undefined ? reply : null);
  }

  #ensure(): Worker | null {
    if (this.#worker || this.#inline) return this.#worker;
    try {
      const worker = new Worker(new URL("./proc_worker.ts", import.meta.url).href, { type: "module" });
      worker.onmessage = (e: MessageEvent<ProcReply>) => this.#settle(e.data.rid, e.data);
      worker.onerror = (e: ErrorEvent) => {
        e.preventDefault(); // not the host's end: read inline from now on
        this.close();
      };
      this.#worker = worker;
    } catch {
      this.#inline = true;
    }
    return this.#worker;
  }

  /** Ends the worker; scans still waiting, and later ones, are read inline. */
  close(): void {
    this.#inline = true;
    this.#worker?.terminate();
    this.#worker = null;
    for (const rid of [...this.#waiting.keys()]) this.#settle(rid, null);
  }
}
