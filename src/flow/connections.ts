/**
 * The flow runner's connections, one set per host: this machine's socket and
 * every named host a step names (`host = "gpu"`, reached over ssh through
 * src/client/ssh.ts). Each host gets a few call connections (one reserved
 * for spawns, so that two steps never race to create the workspace or pick
 * the same pane name there) and one event feed that wakes the barriers of
 * its panes.
 *
 * @module
 */
import { Client } from "../client/client.ts";
import { CliFailure, describeError } from "../errors.ts";
import type { FlowPlan } from "../spec/flow.ts";
import type { Result, ResultMethod } from "../spec/results.ts";
import type { Locator } from "../toml_locate.ts";
import type { LocatedIssue } from "../spec/workspace.ts";
import { locateIssues } from "../up/check.ts";

/** The label of this machine's host (as in `ps --all-hosts`). */
export const LOCAL = "local";
/** Connections for calls per host: one for spawns, the rest shared by barriers and sends. */
const CONNECTIONS = 3;

/** Output changes per pane, from one `events.subscribe` connection. */
export class ChangeFeed {
  #waiters = new Map<number, Set<() => void>>();
  #exits = new Map<number, number>();
  #client: Client | null = null;
  #closed = false;

  async start(client: Client) {
    this.#client = client;
    await this.#client.subscribe({
      types: ["surface_changed", "surface_exited", "surface_closed"],
    });
    (async () => {
      while (!this.#closed) {
        const msg = await this.#client!.next().catch(() => null);
        if (msg === null) {
          // The connection ended (a remote host lost): wake every barrier so it
          // polls, and fails on the call if the host is gone.
          for (const set of this.#waiters.values()) for (const w of set) w();
          break;
        }
        const ev = msg.value as { type: string; surface_id?: number; exit_code?: number };
        if (ev.surface_id === undefined) {
          if (ev.type === "dropped") { for (const set of this.#waiters.values()) for (const w of set) w(); }
          continue;
        }
        if (ev.type === "surface_exited") this.#exits.set(ev.surface_id, ev.exit_code ?? -1);
        if (ev.type === "surface_closed") this.#exits.set(ev.surface_id, ev.exit_code ?? -1);
        for (const w of this.#waiters.get(ev.surface_id) ?? []) w();
      }
    })();
  }

  /** Resolves on the next change of the pane, or after `ms`. */
  next(id: number, ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const set = this.#waiters.get(id) ?? new Set();
      this.#waiters.set(id, set);
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      set.add(done);
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    });
  }

  exitCode(id: number): number | undefined {
    return this.#exits.get(id);
  }

  close() {
    this.#closed = true;
    this.#client?.close();
  }
}

interface Lane {
  c: Client;
  tail: Promise<unknown>;
  busy: number;
}

/** One host's connections: call lanes and an event feed. */
export class HostLink {
  readonly feed = new ChangeFeed();
  #lanes: Lane[] = [];

  private constructor(readonly host: string) {}

  /** Opens the lanes and the feed on `address` (a socket path or a host name). */
  static async open(host: string, address: string, opts: { start?: boolean } = {}): Promise<HostLink> {
    const link = new HostLink(host);
    // The first connection may start the host there; the others find it running.
    const first = await Client.connect(address, opts);
    const rest = await Promise.allSettled(Array.from({ length: CONNECTIONS }, () => Client.connect(address)));
    const clients = [first, ...rest.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []))];
    const failed = rest.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) {
      for (const c of clients) c.close();
      throw failed.reason;
    }
    for (const c of clients.slice(0, CONNECTIONS)) link.#lanes.push({ c, tail: Promise.resolve(), busy: 0 });
    try {
      await link.feed.start(clients[CONNECTIONS]);
    } catch (e) {
      link.close();
      clients[CONNECTIONS].close();
      throw e;
    }
    return link;
  }

  #on<M extends ResultMethod>(lane: Lane, method: M, params: unknown): Promise<Result<M>> {
    lane.busy++;
    const p = lane.tail.then(() => lane.c.call(method, params));
    lane.tail = p.then(() => lane.busy--, () => lane.busy--);
    return p;
  }

  /** A call on the least busy lane (one request at a time per connection). */
  call<M extends ResultMethod>(method: M, params: unknown): Promise<Result<M>> {
    return this.#on(this.#lanes.slice(1).reduce((a, b) => (b.busy < a.busy ? b : a)), method, params);
  }

  /** A call on the spawn lane: spawns on one host go one at a time. */
  spawnCall<M extends ResultMethod>(method: M, params: unknown): Promise<Result<M>> {
    return this.#on(this.#lanes[0], method, params);
  }

  close() {
    for (const l of this.#lanes) l.c.close();
    this.feed.close();
  }
}

/**
 * Every host a flow runs on: `local` (this machine's socket; absent when no
 * step runs here) and the named hosts of its steps.
 */
export class FlowHosts {
  #local: string | null;
  #links = new Map<string, HostLink>();

  /** `localPath`: this machine's host socket, or null when the flow has no local step. */
  constructor(localPath: string | null) {
    this.#local = localPath;
  }

  /** Sets this machine's host socket (once it is known: an embedded host's is private). */
  setLocal(path: string) {
    this.#local = path;
  }

  /**
   * Connects to every host in `hosts` (`local` and names) at once, `start`ing a
   * named host's `paneflow serve` when none runs there (as `up --host` does).
   * Resolves with why each host that failed did (nothing stays open for those).
   */
  async open(hosts: string[], opts: { start?: boolean } = {}): Promise<Map<string, string>> {
    const failures = new Map<string, string>();
    await Promise.all(hosts.map(async (h) => {
      if (this.#links.has(h)) return;
      const address = h === LOCAL ? this.#local : h;
      if (address === null) {
        failures.set(h, "the flow runs nothing on this machine");
        return;
      }
      try {
        this.#links.set(h, await HostLink.open(h, address, h === LOCAL ? {} : opts));
      } catch (e) {
        failures.set(h, describeError(e).message);
      }
    }));
    return failures;
  }

  /** The link of `host` (null: this machine); it must have been opened. */
  link(host: string | null): HostLink {
    const link = this.#links.get(host ?? LOCAL);
    if (!link) throw new Error(`no connection to host "${host ?? LOCAL}"`);
    return link;
  }

  close() {
    for (const l of this.#links.values()) l.close();
    this.#links.clear();
  }
}

/**
 * Checks that each named host answers (ssh reaches it, paneflow runs there and
 * speaks our protocol), at once, without starting anything; why each that
 * failed did. A machine where paneflow is installed but no host runs yet is
 * fine: `flow run` starts one there, as `up --host` does. For the hosts in
 * `gate`, whether their write gate is open goes into `scripting` (a host
 * not running yet is left out: its gate is known once it runs).
 */
export async function probeHosts(
  hosts: string[],
  opts: { gate?: string[]; scripting?: Map<string, boolean> } = {},
): Promise<Map<string, string>> {
  const failures = new Map<string, string>();
  await Promise.all(hosts.map(async (h) => {
    let client: Client | null = null;
    try {
      client = await Client.connect(h);
      if (opts.gate?.includes(h)) {
        const caps = await client.call("system.capabilities", {});
        opts.scripting?.set(h, caps.scripting);
      }
    } catch (e) {
      const why = describeError(e).message;
      if (!/^No paneflow host answers/.test(why)) failures.set(h, why);
    } finally {
      client?.close();
    }
  }));
  return failures;
}

/** The hosts a flow writes into (`local` or names): a send's target's, a submitting step's. */
export function writeHosts(plan: FlowPlan): string[] {
  return [...new Set(plan.steps.filter((s) => s.send || s.submit).map((s) => s.host ?? LOCAL))];
}

/**
 * Before anything starts: every named host of the flow must answer, and those
 * it writes into must have their write gate open (with `gate`: run and --dry-run). With `open` (a real run) the
 * connections are kept for the run, a host being started there when none runs;
 * otherwise (validate, --dry-run) nothing is started anywhere. A host that
 * cannot be reached is a problem at the `host` of the first step naming it; a
 * closed gate is exit 1, as locally.
 */
export async function connectHosts(
  plan: FlowPlan,
  opts: { open: boolean; gate: boolean; file: string; locate: Locator },
): Promise<{ hosts: FlowHosts } | { issues: LocatedIssue[] }> {
  const hosts = new FlowHosts(null);
  const gate = opts.gate ? writeHosts(plan).filter((h) => h !== LOCAL) : [];
  const scripting = new Map<string, boolean>();
  let failures: Map<string, string>;
  if (!opts.open) failures = await probeHosts(plan.hosts, { gate, scripting });
  else {
    failures = await hosts.open(plan.hosts, { start: true });
    if (!failures.size) {
      for (const h of gate) {
        scripting.set(
          h,
          (await hosts.link(h).call("system.capabilities", {})).scripting,
        );
      }
    }
  }
  if (failures.size) {
    hosts.close();
    const issues = [...failures].map(([h, why]) => ({
      path: ["step", plan.steps.find((s) => s.host === h && s.pane)!.index, "host"],
      message: why,
    }));
    return { issues: locateIssues(issues, opts.file, opts.locate) };
  }
  for (const [h, open] of scripting) {
    if (!open) {
      hosts.close();
      throw new CliFailure(
        `The flow writes into panes on host "${h}" (send or submit) but that host's write gate is closed: ` +
          `start the host there with PANEFLOW_IPC_SCRIPTING=1 or set "ai_unrestricted": true in its config`,
      );
    }
  }
  return { hosts };
}
