/**
 * The host process: claims the socket, loads the config, starts the pane
 * workers, serves connections (and with `stdio`, its own stdin/stdout as
 * one more, whose end stops the host), and shuts down cleanly on
 * SIGTERM/SIGINT/SIGHUP (panes get SIGHUP, the socket file is removed).
 *
 * @module
 */
import { PluginHost, type PluginOptions } from "../plugins/service.ts";
import { ErrorCode, MAX_CONNECTIONS } from "../spec/codes.ts";
import { type Config, loadConfig } from "../spec/config.ts";
import { shimEnv } from "../tmux/shim.ts";
import { dirname } from "../paths.ts";
import { EventBus } from "../core/bus.ts";
import { PanePool } from "../core/pane/pool.ts";
import { ProcScanner } from "../core/pane/proc_scan.ts";
import { AgentTracker } from "../agents/tracker.ts";
import { Registry } from "../core/registry.ts";
import type { HostContext, Service } from "./context.ts";
import type { Connection } from "../core/connection.ts";
import type { Duplex } from "../wire/duplex.ts";
import { type FramingName, writeJson } from "../wire/framing.ts";
import { serveConnection } from "./socket.ts";
import { ClientTable } from "./clients.ts";
import { pruneOrphanWorktrees } from "../up/worktree.ts";
import { HostGuard } from "../core/isolation/host_guard.ts";
import { Sessions } from "../session/mod.ts";
import { PaneIO } from "../paneio/service.ts";
import { Typist } from "../typing/mod.ts";
import { CapsService, describeGrants } from "../caps/service.ts";
import { listenWithPeers, type PeerListener } from "../caps/peer_listener.ts";
import { journaledDirs, type Restorer, restoreService } from "../restore/mod.ts";
import { NotifyService } from "../notify/service.ts";
import { stateFile, UsageService } from "../usage/service.ts";

/** A running host. */
export interface Host {
  ctx: HostContext;
  bus: EventBus;
  /** Resolves when the host has stopped. */
  done: Promise<void>;
  stop(): Promise<void>;
}

/** Signals that stop the host cleanly: SIGHUP too, for a foreground host whose terminal closes. */
const STOP_SIGNALS: Deno.Signal[] = ["SIGTERM", "SIGINT", "SIGHUP"];

/** Options for {@link startHost}. */
export interface HostOptions {
  socketPath: string;
  config?: Config;
  /** Install SIGTERM/SIGINT/SIGHUP handlers (the `serve` verb does; embedded hosts don't). */
  signals?: boolean;
  log?: (line: string) => void;
  /**
   * Also serve the protocol on stdin/stdout (`serve --stdio`), with no idle
   * deadline; when stdin ends, the host stops.
   */
  stdio?: { framing: FramingName };
  /** `serve --plugin` / `--allow-plugin-load` (src/plugins/). */
  plugins?: PluginOptions;
  /** The message queue's root (`serve --queue`); else config `queue.root`; none: no delivery. */
  queueRoot?: string;
  /** `serve --restore`: restore the last host's workspaces at start, whatever config `restore` says. */
  restore?: "on";
}

/** This process's stdin and stdout as one connection. */
const STDIO: Duplex = {
  read: (p) => Deno.stdin.read(p),
  write: (p) => Deno.stdout.write(p),
  close: () => {},
};

/**
 * Who is on a socket path: nobody (a stale file), a paneflow host, or some
 * other listener. A host killed moments ago can still accept (its listener
 * goes with its last thread, later on a loaded machine) and then drop the
 * connection unanswered: a dropped connection is asked again, and only a
 * listener that keeps dropping counts as another program.
 */
async function probe(path: string): Promise<"dead" | "paneflow" | "other"> {
  for (let attempt = 1;; attempt++) {
    const who = await probeOnce(path);
    if (who !== "dropped") return who;
    if (attempt === 3) return "other";
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function probeOnce(path: string): Promise<"dead" | "paneflow" | "other" | "dropped"> {
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path });
  } catch {
    return "dead";
  }
  let silent = false;
  try {
    await writeJson(conn, { jsonrpc: "2.0", id: 1, method: "system.ping" });
    const buf = new Uint8Array(256);
    const timer = setTimeout(() => {
      silent = true;
      conn.close();
    }, 2000);
    const n = await conn.read(buf).catch(() => null);
    clearTimeout(timer);
    if (n === null) return silent ? "other" : "dropped";
    return new TextDecoder().decode(buf.subarray(0, n)).includes('"pong"') ? "paneflow" : "other";
  } catch {
    return "dropped";
  } finally {
    try {
      conn.close();
    } catch { /* closed by the timer */ }
  }
}

/**
 * Makes the socket's directory (0700) and clears a stale socket; throws if
 * anything listens on the path, or if the path is not a socket at all (it is
 * never deleted then).
 */
async function claimSocket(path: string) {
  const dir = dirname(path);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  let info = await Deno.stat(dir);
  // Our own directories (the default paths' `paneflow` and `paneflow-$UID`) are made private.
  const ours = /(^|\/)paneflow(-\d+|-user)?$/.test(dir);
  if (ours && info.uid === Deno.uid() && (info.mode! & 0o777) !== 0o700) {
    await Deno.chmod(dir, 0o700);
    info = await Deno.stat(dir);
  }
  // Same user only (README.md, the socket): in a directory another user owns or may write to (unless it is
  // sticky, like /tmp), they could swap the socket for their own.
  const sticky = (info.mode! & 0o1000) !== 0;
  if (!sticky && info.uid !== Deno.uid()) {
    throw new Error(`${dir} belongs to uid ${info.uid}, not to you; refusing to put the socket there`);
  }
  if (!sticky && (info.mode! & 0o022) !== 0) {
    throw new Error(
      `${dir} is writable by other users (mode ${
        (info.mode! & 0o777).toString(8)
      }); refusing to put the socket there (chmod 700 it)`,
    );
  }
  let existing: Deno.FileInfo;
  try {
    existing = await Deno.lstat(path);
  } catch {
    return;
  }
  if (!existing.isSocket) {
    throw new Error(
      `${path} exists and is not a socket; remove it or point PANEFLOW_SOCKET_PATH elsewhere`,
    );
  }
  const who = await probe(path);
  if (who === "paneflow") {
    throw new Error(`A paneflow host is already running on ${path}`);
  }
  if (who === "other") {
    throw new Error(
      `Another program is listening on ${path}; stop it or point PANEFLOW_SOCKET_PATH elsewhere`,
    );
  }
  await Deno.remove(path);
}

/** The host's lifetime objects, built before anything is served. */
interface Parts {
  config: Config;
  log: (line: string) => void;
  bus: EventBus;
  pool: PanePool;
  registry: Registry;
  sessions: Sessions;
  plugins: PluginHost;
  procs: ProcScanner;
  agents: AgentTracker;
  typing: Typist;
  paneio: PaneIO;
  guard: HostGuard;
  caps: CapsService;
  restore: Restorer;
  notify: NotifyService;
  usage: UsageService;
}

/**
 * Builds the core (bus, pane workers, registry) and the features that stand
 * on it, in dependency order; the workers' events go to the registry first,
 * then to sessions.
 */
async function buildParts(opts: HostOptions, config: Config, log: (line: string) => void): Promise<Parts> {
  const bus = new EventBus();
  const pool = new PanePool(config.host.pane_workers, log);
  // tmux_compat: every pane gets TMUX and the tmux shim first on its PATH (docs/tmux.md).
  if (config.tmux_compat) {
    config.terminal.env = { ...shimEnv(opts.socketPath, Deno.env), ...config.terminal.env };
  }
  const registry = new Registry(config, pool, bus, opts.socketPath);
  bus.watchers = (surfaces) => pool.watch(surfaces);
  // One worker does the host's /proc reads: agent detection's and reaping's.
  const procs = new ProcScanner();
  const agents = new AgentTracker(registry, pool, bus, config.agent_stall_threshold_secs * 1000, procs);
  const usage = await usageLedger(opts, config, { registry, bus, pool, log });
  // Every write into a pane (src/typing/); a large prompt goes to a file in prompts/ beside the socket.
  const typing = new Typist({
    pool,
    agents,
    submitDelayMs: config.submit_paste_delay_ms,
    promptDir: `${dirname(opts.socketPath)}/prompts`,
    refuse: (id) => usage.refusal(id),
  });
  bus.tap((ev) => {
    if (ev.type === "surface_closed" && typeof ev.surface_id === "number") void typing.closed(ev.surface_id);
  });
  const sessions = new Sessions(registry, pool, typing);
  pool.listen((ev) => {
    registry.onWorkerEvent(ev);
    sessions.onWorkerEvent(ev);
  });
  const plugins = new PluginHost(sessions, pool, opts.plugins);
  const caps = new CapsService(config, registry, bus, opts.socketPath);
  try {
    await plugins.loadStartup(opts.plugins?.manifests ?? []);
  } catch (e) {
    agents.dispose();
    procs.close();
    pool.terminate();
    throw new Error((e as Error).message, { cause: e });
  }
  const paneio = new PaneIO({ config, registry, pool, agents, typing, log }, bus);
  const guard = await HostGuard.start({
    socketPath: opts.socketPath,
    registry,
    bus,
    graceMs: config.terminal.kill_grace_ms,
    log,
    table: () => procs.table(),
  });
  const core = {
    config,
    log,
    bus,
    pool,
    registry,
    sessions,
    plugins,
    procs,
    agents,
    typing,
    paneio,
    guard,
    caps,
    usage,
  };
  return { ...core, ...outerParts(core, opts) };
}

/** src/usage/: the ledger, its file beside the other per-socket state; a hard budget presses Esc. */
async function usageLedger(
  opts: HostOptions,
  config: Config,
  parts: Pick<Parts, "registry" | "bus" | "pool" | "log">,
): Promise<UsageService> {
  return new UsageService({
    registry: parts.registry,
    bus: parts.bus,
    prices: config.usage.prices,
    file: await stateFile(opts.socketPath, config.usage.state_dir),
    log: parts.log,
    budget: config.usage.budget,
    interrupt: (id) => parts.pool.write(id, "\x1b"),
  });
}

/** The features that watch the whole host: the restore journal and notifications. */
function outerParts(
  p: Omit<Parts, "restore" | "notify">,
  opts: HostOptions,
): Pick<Parts, "restore" | "notify"> {
  const { config, registry, pool, agents, bus, typing, log, plugins, caps } = p;
  const restore = restoreService({
    config,
    registry,
    pool,
    agents,
    bus,
    typing,
    socketPath: opts.socketPath,
    log,
    mode: opts.restore,
  });
  registry.describeExtra = (s) => {
    const mark = restore.markOf(s.id);
    const extra = { ...plugins.describeSurface(s.session), caps: describeGrants(caps.paneGrants(s)) };
    return mark ? { ...extra, restored: mark } : extra;
  };
  const notify = new NotifyService({ bus, registry, agents, typing, config: config.notify, log });
  return { restore, notify };
}

/**
 * The host's services, in start order; disposed in reverse. A capability
 * adds one line here (and keeps its state in its own folder).
 */
function servicesOf(parts: Parts, opts: HostOptions): Service[] {
  const { config, registry, pool, guard, agents, plugins, procs, typing, paneio, notify, caps } = parts;
  return [
    // src/caps/: classifies each connection as it opens, before any other service sees it.
    caps,
    { name: "procs", dispose: () => procs.close() },
    {
      name: "panes",
      dispose: async () => {
        // Every pane closed (SIGHUP), then SIGKILL to what outlives it by terminal.kill_grace_ms.
        await guard.stop(() => registry.closeAll().catch(() => {}));
        pool.terminate();
        await typing.dispose();
      },
    },
    { name: "agents", dispose: () => agents.dispose() },
    // src/usage/: the ledger, loaded before the first hook can arrive.
    { name: "usage", start: () => parts.usage.load(), dispose: () => parts.usage.dispose() },
    { name: "plugins", dispose: () => plugins.dispose() },
    {
      // src/paneio/: the message queue, when the host has a root.
      name: "queue",
      start: async () => {
        const queueRoot = opts.queueRoot ?? config.queue.root;
        if (!queueRoot) return;
        try {
          await paneio.startQueue(queueRoot, {
            graceMs: config.queue.grace_secs * 1000,
            timeoutMs: config.queue.timeout_secs * 1000,
          });
        } catch (e) {
          throw new Error(`Cannot start the message queue: ${(e as Error).message}`, { cause: e });
        }
      },
      dispose: () => paneio.dispose(),
    },
    // src/notify/: rules to sinks, reply links.
    { name: "notify", start: () => notify.start(), dispose: () => notify.dispose() },
    // src/restore/: last of all at start (the last host's workspaces back), first at a stop
    // (the journal written while every pane still runs).
    { name: "restore", start: () => parts.restore.start(), dispose: () => parts.restore.dispose() },
  ];
}

/** The host's back half: disposing services in reverse, closing connections, removing the socket. */
function stopper(
  parts: Parts,
  services: Service[],
  net: {
    listener: PeerListener;
    socketPath: string;
    socketIno: number | null;
    connections: Set<Duplex>;
  },
): { stop: () => Promise<void>; done: Promise<void> } {
  let stopping: Promise<void> | null = null;
  const { promise: done, resolve } = Promise.withResolvers<void>();
  const stop = () =>
    stopping ??= (async () => {
      parts.log("shutting down");
      // Closing a Deno unix listener unlinks its path: while the file there is
      // another host's (ours was removed and the path taken), ours stays open
      // instead (nothing can reach it by path) until the process ends.
      const file = await Deno.lstat(net.socketPath).catch(() => null);
      const ours = file !== null && file.ino === net.socketIno;
      if (ours) {
        try {
          net.listener.close();
        } catch { /* closed */ }
      }
      for (const service of [...services].reverse()) {
        try {
          await service.dispose?.();
        } catch (e) {
          parts.log(`${service.name}: dispose failed: ${(e as Error).message}`);
        }
      }
      for (const c of net.connections) {
        try {
          c.close();
        } catch { /* closed */ }
      }
      if (ours) await Deno.remove(net.socketPath).catch(() => {});
      resolve();
    })();
  return { stop, done };
}

/** Accepts connections until the listener closes; calls over the budget get a backpressure error. */
async function acceptLoop(
  listener: PeerListener,
  ctx: HostContext,
  connOpts: Parameters<typeof serveConnection>[2],
  connections: Set<Duplex>,
  stopping: () => boolean,
): Promise<void> {
  try {
    for await (const { conn, peer } of listener) {
      // Calls are budgeted apart from event streams (a connection that subscribed no longer counts).
      if (!ctx.clients.admitsCall()) {
        writeJson(conn, {
          jsonrpc: "2.0",
          id: null,
          error: {
            code: ErrorCode.Backpressure,
            message:
              `Too many connections: the host serves at most ${MAX_CONNECTIONS} calls at once, held by ${ctx.clients.holders()}; retry later (see them with: paneflow clients)`,
          },
        }).catch(() => {}).finally(() => conn.close());
        continue;
      }
      connections.add(conn);
      serveConnection(conn, ctx, { ...connOpts, peer }).finally(() => connections.delete(conn));
    }
  } catch (e) {
    if (!stopping()) ctx.log(`listener failed: ${(e as Error).message}`);
  }
}

/** Claims the socket path: refuses a live host's, takes a dead one's over. */
async function claim(socketPath: string, log: (line: string) => void, restore: string): Promise<void> {
  if (new TextEncoder().encode(socketPath).length > 107) {
    throw new Error(`Socket path is too long (over 107 bytes): ${socketPath}`);
  }
  await claimSocket(socketPath);
  // A host that restores at start keeps the worktrees its restored panes work in.
  const journaled = restore === "on" ? await journaledDirs(socketPath) : [];
  const keep = (path: string) => journaled.some((d) => d === path || d.startsWith(`${path}/`));
  await pruneOrphanWorktrees(socketPath, log, keep).catch((e) => log(`worktree prune failed: ${e.message}`));
}

/** Listens on the claimed path, 0600. */
async function listenOn(socketPath: string) {
  // Each connection comes with its peer's credentials: src/caps/ classifies the caller by them.
  const listener = listenWithPeers(socketPath);
  await Deno.chmod(socketPath, 0o600);
  // The socket file is removed at the end only while it is still this one (its inode).
  const socketIno = (await Deno.lstat(socketPath)).ino;
  return { listener, socketIno };
}

/** What every handler reaches: the parts, and the host's own switches. */
function contextOf(
  parts: Parts,
  opts: HostOptions,
  more: { stop: () => void; connections: ReadonlyMap<number, Connection>; clients: ClientTable },
): HostContext {
  return {
    config: parts.config,
    registry: parts.registry,
    pool: parts.pool,
    agents: parts.agents,
    typing: parts.typing,
    scripting: Deno.env.get("PANEFLOW_IPC_SCRIPTING") === "1",
    startedAt: Date.now(),
    log: parts.log,
    socketPath: opts.socketPath,
    shutdown: more.stop,
    sessions: parts.sessions,
    plugins: parts.plugins,
    paneio: parts.paneio,
    restore: parts.restore,
    connections: more.connections,
    clients: more.clients,
    bus: parts.bus,
    caps: parts.caps,
    notify: parts.notify,
    usage: parts.usage,
  };
}

/** Starts a host on `socketPath`. */
export async function startHost(opts: HostOptions): Promise<Host> {
  const log = opts.log ?? ((line: string) => console.error(`paneflow: ${line}`));
  const config = opts.config ?? await loadConfig();
  await claim(opts.socketPath, log, opts.restore ?? config.restore.mode);
  const parts = await buildParts(opts, config, log);
  const { listener, socketIno } = await listenOn(opts.socketPath);
  const services = servicesOf(parts, opts);
  const connections = new Set<Duplex>();
  let stopped = false;
  const net = { listener, socketPath: opts.socketPath, socketIno, connections };
  const { stop: stopServices, done } = stopper(parts, services, net);
  const onSignal = () => void stop();
  const stop = () => {
    stopped = true;
    if (opts.signals) { for (const sig of STOP_SIGNALS) Deno.removeSignalListener(sig, onSignal); }
    return stopServices();
  };
  if (opts.signals) { for (const sig of STOP_SIGNALS) Deno.addSignalListener(sig, onSignal); }

  const open = new Map<number, Connection>();
  const clients = new ClientTable();
  const ctx = contextOf(parts, opts, { stop: () => void stop(), connections: open, clients });
  try {
    for (const service of services) await service.start?.(ctx);
  } catch (e) {
    await stop();
    throw e;
  }
  const connOpts = {
    idleTimeoutMs: config.host.idle_timeout_secs * 1000,
    heartbeatMs: config.host.heartbeat_secs * 1000,
    bus: parts.bus,
    clients,
    readable: (conn: Connection, surfaceId: number) => parts.caps.mayRead(conn, surfaceId),
    onConnection: (conn: Connection) => {
      open.set(conn.id, conn);
      clients.add(conn);
      conn.onClose(() => void open.delete(conn.id));
      for (const service of services) service.connected?.(conn);
    },
  };
  void acceptLoop(listener, ctx, connOpts, connections, () => stopped);
  if (opts.stdio) {
    // One client for the host's whole life: an oversized message is answered and skipped, not fatal.
    const stdioOpts = {
      ...connOpts,
      idleTimeoutMs: 0,
      framing: opts.stdio.framing,
      kind: "stdio",
      skipTooLong: true,
    };
    serveConnection(STDIO, ctx, stdioOpts).finally(() => {
      log("stdin ended");
      void stop();
    });
  }
  log(`listening on ${opts.socketPath}${opts.stdio ? " and stdio" : ""} (pid ${Deno.pid})`);
  return { ctx, bus: parts.bus, done, stop };
}
