/**
 * Process detection's /proc reads, off the main thread: a scan of 100 panes
 * reads /proc/<pid>/stat of every process on the machine, and done on the
 * main thread (even with async reads, one op each) it was a third of the
 * host's main-thread time under the soak's load (bench/host_profile.ts).
 * {@link ProcScanner} sends each scan to one worker (./proc_worker.ts) and
 * falls back to reading inline when the worker cannot run or fails.
 *
 * @module
 */
import { foregroundMembers, type ProcessInfo } from "./proc.ts";

/** A scan request: each pid is a PTY session leader. */
export interface ProcRequest {
  rid: number;
  pids: number[];
  quick: boolean;
}

/** A scan's answer: `foregroundMembers` as entries, or what failed. */
export type ProcReply =
  | { rid: number; members: [number, ProcessInfo[] | null][]; error?: undefined }
  | { rid: number; error: string; members?: undefined };

/** How long a scan may take in the worker before it is read inline instead. */
const SCAN_DEADLINE_MS = 5000;

/** Foreground process groups of panes, read by a worker. */
export class ProcScanner {
  #worker: Worker | null = null;
  /** No worker (it could not start, it failed, or the scanner was closed): read inline. */
  #inline = false;
  #rid = 0;
  #waiting = new Map<number, (members: Map<number, ProcessInfo[] | null> | null) => void>();

  /** Each PTY's foreground group members, by its leader's pid (see `foregroundMembers`). */
  async members(pids: number[], quick = false): Promise<Map<number, ProcessInfo[] | null>> {
    if (!pids.length) return new Map();
    const worker = this.#ensure();
    if (!worker) return foregroundMembers(pids, quick);
    const rid = ++this.#rid;
    const answer = await new Promise<Map<number, ProcessInfo[] | null> | null>((resolve) => {
      const timer = setTimeout(() => this.#settle(rid, null), SCAN_DEADLINE_MS);
      this.#waiting.set(rid, (m) => {
        clearTimeout(timer);
        resolve(m);
      });
      worker.postMessage({ rid, pids, quick } satisfies ProcRequest);
    });
    return answer ?? foregroundMembers(pids, quick);
  }

  #settle(rid: number, members: Map<number, ProcessInfo[] | null> | null): void {
    const done = this.#waiting.get(rid);
    this.#waiting.delete(rid);
    done?.(members);
  }

  #ensure(): Worker | null {
    if (this.#worker || this.#inline) return this.#worker;
    try {
      const worker = new Worker(new URL("./proc_worker.ts", import.meta.url).href, { type: "module" });
      worker.onmessage = (e: MessageEvent<ProcReply>) => {
        const r = e.data;
        this.#settle(r.rid, r.members ? new Map(r.members) : null);
      };
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
