/**
 * The host's side of "no orphans" (see ./watchdog.ts for which mechanism
 * covers which case): sweeps what a previous host left, starts the
 * watchdog, records pane sessions, escalates every closed pane (SIGHUP,
 * then SIGKILL after `terminal.kill_grace_ms`) and waits for that at stop.
 *
 * @module
 */
import type { EventBus } from "../bus.ts";
import type { Registry, Surface } from "../registry.ts";
import { escalate, type ProcessTable, sharedTable } from "./reap.ts";
import { HostRecord, recordPath, startWatchdog, sweepLeftovers, type Watchdog } from "./watchdog.ts";

/** One host's guard. */
export class HostGuard {
  #watchdog: Watchdog | null;
  #record: HostRecord;
  #pending = new Set<Promise<unknown>>();
  #sessions: number[] = [];
  #stopping = false;
  /** Where reaping reads the process table (the host's /proc worker); inline when not given. */
  #table: ProcessTable | undefined;

  private constructor(
    private readonly _registry: Registry,
    private readonly _graceMs: number,
    private readonly _log: (line: string) => void,
    socketPath: string,
    table: ProcessTable | undefined,
  ) {
    this.#table = table && sharedTable(table);
    this.#record = new HostRecord(recordPath(socketPath), _registry.hostId);
    this.#watchdog = startWatchdog(_registry.hostId, _log);
  }

  /** Ends what a previous host on the socket left, then guards this one's panes. */
  static async start(opts: {
    socketPath: string;
    registry: Registry;
    bus: EventBus;
    graceMs: number;
    log: (line: string) => void;
    table?: ProcessTable;
  }): Promise<HostGuard> {
    await sweepLeftovers(opts.socketPath, opts.log).catch((e) =>
      opts.log(`leftover sweep failed: ${e.message}`)
    );
    const guard = new HostGuard(opts.registry, opts.graceMs, opts.log, opts.socketPath, opts.table);
    opts.bus.tap((ev) => {
      if (ev.type !== "surface_created") return;
      const s = opts.registry.surfaces.get(ev.surface_id as number);
      if (s?.pid) guard.#addSession(s.pid);
    });
    opts.registry.closeListeners.add((closed) => {
      if (!guard.#stopping) { for (const s of closed) guard.#reap(s); }
    });
    return guard;
  }

  #addSession(pid: number) {
    this.#sessions.push(pid);
    this.#watchdog?.addSession(pid);
    this.#record.addSession(pid);
  }

  #removeSession(pid: number) {
    const i = this.#sessions.indexOf(pid);
    if (i >= 0) this.#sessions.splice(i, 1);
    this.#watchdog?.removeSession(pid);
    this.#record.removeSession(pid);
  }

  /** SIGHUP to everything of the pane, SIGKILL to what is left after the grace. */
  #reap(s: Surface) {
    const job = escalate({ sessions: s.pid ? [s.pid] : [], token: s.token }, this._graceMs, this.#table)
      .then((killed) => {
        if (killed.length) {
          this._log(
            `pane ${s.id}: ${killed.length} process(es) outlived SIGHUP by ${this._graceMs} ms; killed`,
          );
        }
        if (s.pid && !this.#stopping) this.#removeSession(s.pid);
      })
      .catch(() => {})
      .finally(() => this.#pending.delete(job));
    this.#pending.add(job);
  }

  /**
   * Closes every pane with `closeAll`, then gives everything of this host
   * (every process carrying its id or in a pane's session) SIGHUP and, after
   * the grace, SIGKILL: one pass for all panes instead of one per pane.
   * Then stops the watchdog (its last sweep finds nothing) and removes the record.
   */
  async stop(closeAll: () => Promise<void>): Promise<void> {
    this.#stopping = true;
    await closeAll();
    const killed = await escalate(
      { hostId: this._registry.hostId, sessions: this.#sessions },
      this._graceMs,
      this.#table,
    )
      .catch(() => []);
    if (killed.length) {
      this._log(`${killed.length} pane process(es) outlived SIGHUP by ${this._graceMs} ms; killed`);
    }
    while (this.#pending.size) await Promise.all([...this.#pending]);
    this.#watchdog?.close();
    await this.#record.remove();
  }
}
