/**
 * The host's side of "no orphans" (see ./watchdog.ts for which mechanism
 * covers which case): sweeps what a previous host left, starts the
 * watchdog, records pane sessions, escalates every closed pane (SIGHUP,
 * then SIGKILL after `terminal.kill_grace_ms`) and waits for that at stop.
 *
 * @module
 */
import type { EventBus } from "../server/bus.ts";
import type { Registry, Surface } from "../server/registry.ts";
import { escalate } from "./reap.ts";
import { HostRecord, recordPath, startWatchdog, sweepLeftovers, type Watchdog } from "./watchdog.ts";

/** One host's guard. */
export class HostGuard {
  #watchdog: Watchdog | null;
  #record: HostRecord;
  #pending = new Set<Promise<unknown>>();
  #sessions: number[] = [];

  private constructor(
    private readonly _registry: Registry,
    private readonly _graceMs: number,
    private readonly _log: (line: string) => void,
    socketPath: string,
  ) {
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
  }): Promise<HostGuard> {
    await sweepLeftovers(opts.socketPath, opts.log).catch((e) =>
      opts.log(`leftover sweep failed: ${e.message}`)
    );
    const guard = new HostGuard(opts.registry, opts.graceMs, opts.log, opts.socketPath);
    opts.bus.tap((ev) => {
      if (ev.type !== "surface_created") return;
      const s = opts.registry.surfaces.get(ev.surface_id as number);
      if (s?.pid) guard.#addSession(s.pid);
    });
    opts.registry.closeListeners.add((closed) => {
      for (const s of closed) guard.#reap(s);
    });
    return guard;
  }

  #addSession(pid: number) {
    this.#sessions.push(pid);
    this.#watchdog?.addSession(pid);
    this.#record.addSession(pid);
  }

  /** SIGHUP to everything of the pane, SIGKILL to what is left after the grace. */
  #reap(s: Surface) {
    const job = escalate({ sessions: s.pid ? [s.pid] : [], token: s.token }, this._graceMs)
      .then((killed) => {
        if (killed.length) {
          this._log(
            `pane ${s.id}: ${killed.length} process(es) outlived SIGHUP by ${this._graceMs} ms; killed`,
          );
        }
      })
      .catch(() => {})
      .finally(() => this.#pending.delete(job));
    this.#pending.add(job);
  }

  /** Waits for the closed panes' escalations, ends anything of this host still running, stops the watchdog. */
  async stop(): Promise<void> {
    while (this.#pending.size) await Promise.all([...this.#pending]);
    await escalate({ hostId: this._registry.hostId, sessions: this.#sessions }, 0).catch(() => {});
    this.#watchdog?.close();
    this.#record.remove();
  }
}
