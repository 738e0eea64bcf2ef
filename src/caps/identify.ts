/**
 * Who is calling: the owner, a pane's program (and which pane), a guest, or
 * the host itself. Decided once per connection from the peer's credentials
 * (`SO_PEERCRED`, ./peer_listener.ts) and what /proc says of the peer and its
 * ancestors; the rules and their order are docs/security.md's
 * classification table:
 *
 * 1. another uid: guest;
 * 2. the caller or an ancestor is in a live pane's session or process group,
 *    or an ancestor is a pane's root process: that pane (the environment is
 *    not consulted, so another pane's `PANEFLOW_PANE_TOKEN` changes nothing);
 * 3. the host itself, or a process the host started outside every pane: the host;
 * 4. the caller or an ancestor carries a pane marker (this host's
 *    `PANEFLOW_HOST_ID`, or `PANEFLOW_SURFACE_ID` with this socket): guest;
 * 5. a caller without a controlling terminal that descends, through
 *    processes without one, from a detached process (its parent is pid 1 or
 *    a subreaper, it has no terminal, it started after the host): guest
 *    (config `caps.detached = "owner"` makes it the owner);
 * 6. anything else: the owner.
 *
 * Linux /proc only; where /proc cannot be read the caller is a guest (a
 * peer that has gone is no one's).
 *
 * @module
 */
import type { Peer } from "./peer_listener.ts";

/** A caller, as refusals and `system.identify` name it. */
export type Caller =
  | { kind: "owner"; pid: number | null; rule: string }
  | { kind: "host"; pid: number | null; rule: string }
  | { kind: "pane"; surface_id: number; pid: number | null; rule: string }
  | { kind: "guest"; pid: number | null; rule: string };

/** A live pane as classification needs it. */
export interface PaneRoot {
  id: number;
  /** Its root process: the leader of its session and first process group. */
  pid: number;
}

/** What /proc says of one process. */
export interface ProcInfo {
  ppid: number;
  pgrp: number;
  session: number;
  /** tty_nr: 0 when it has no controlling terminal. */
  tty: number;
  /** Start time in clock ticks after boot. */
  start: number;
  comm: string;
}

/** Reads a process (null when it is gone or unreadable) and its environment. */
export interface ProcReader {
  stat(pid: number): ProcInfo | null;
  environ(pid: number): string[] | null;
}

/** The host's side of the decision. */
export interface HostFacts {
  pid: number;
  uid: number;
  /** The host's start time in clock ticks after boot. */
  start: number;
  hostId: string;
  socketPath: string;
  panes: Iterable<PaneRoot>;
  /** Rule 5's verdict (config `caps.detached`): "guest" unless the config says "owner". */
  detached?: "guest" | "owner";
}

/** Parents that adopt orphans besides pid 1 (PR_SET_CHILD_SUBREAPER is not visible in /proc). */
const SUBREAPERS = new Set([
  "systemd",
  "tini",
  "dumb-init",
  "docker-init",
  "catatonit",
  "s6-svscan",
  "runsvdir",
]);

/** Parses /proc/<pid>/stat (the command may hold spaces and parentheses). */
export function parseProcStat(text: string): ProcInfo | null {
  const open = text.indexOf("(");
  const close = text.lastIndexOf(")");
  if (open < 0 || close < 0) return null;
  const f = text.slice(close + 2).split(" ");
  return {
    ppid: Number(f[1]),
    pgrp: Number(f[2]),
    session: Number(f[3]),
    tty: Number(f[4]),
    start: Number(f[19]),
    comm: text.slice(open + 1, close),
  };
}

/** The reader over the real /proc. */
export const procReader: ProcReader = {
  stat(pid) {
    try {
      return parseProcStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
    } catch {
      return null;
    }
  },
  environ(pid) {
    try {
      return new TextDecoder().decode(Deno.readFileSync(`/proc/${pid}/environ`)).split("\0");
    } catch {
      return null;
    }
  },
};

/** The host's start time (clock ticks after boot), 0 where /proc has none. */
export function selfStart(proc: ProcReader = procReader): number {
  return proc.stat(Deno.pid)?.start ?? 0;
}

const MAX_DEPTH = 64;

/** Decides who `peer` is; see the module header for the rules. */
export function classify(peer: Peer, host: HostFacts, proc: ProcReader = procReader): Caller {
  const pid = peer.pid;
  if (peer.uid !== host.uid) return { kind: "guest", pid, rule: `another user (uid ${peer.uid})` };
  if (pid === host.pid) return { kind: "host", pid, rule: "the host itself" };
  const bySession = new Map<number, number>();
  for (const p of host.panes) if (p.pid > 0) bySession.set(p.pid, p.id);
  // The caller and its ancestors, nearest first.
  const chain: { pid: number; info: ProcInfo }[] = [];
  for (let p = pid; p > 1 && chain.length < MAX_DEPTH;) {
    const info = proc.stat(p);
    if (!info) break;
    chain.push({ pid: p, info });
    p = info.ppid;
  }
  if (!chain.length) return { kind: "guest", pid, rule: "its process could not be read" };
  for (const [i, { pid: p, info }] of chain.entries()) {
    const who = i === 0 ? "it" : `its ancestor ${p}`;
    const pane = bySession.get(info.session) ?? bySession.get(info.pgrp);
    if (pane !== undefined) {
      return { kind: "pane", surface_id: pane, pid, rule: `${who} is in pane ${pane}'s session` };
    }
    const root = bySession.get(p);
    if (root !== undefined) {
      return { kind: "pane", surface_id: root, pid, rule: `${who} is pane ${root}'s root` };
    }
    if (p === host.pid) return { kind: "host", pid, rule: "the host started it outside every pane" };
  }
  for (const [i, { pid: p }] of chain.entries()) {
    const marker = markerOf(proc.environ(p), host);
    if (marker) {
      return {
        kind: "guest",
        pid,
        rule: `${i === 0 ? "it" : `its ancestor ${p}`} carries ${marker} but is in no pane`,
      };
    }
  }
  for (const { pid: p, info } of chain) {
    if (info.tty !== 0) break; // a terminal session of its own: what a person types in
    const parent = info.ppid <= 1 ? null : proc.stat(info.ppid);
    const orphan = info.ppid <= 1 || (parent !== null && SUBREAPERS.has(parent.comm));
    if (orphan && info.start >= host.start) {
      return {
        kind: host.detached ?? "guest",
        pid,
        rule: `${p === pid ? "it" : `its ancestor ${p}`} was detached (parent ${info.ppid}, no terminal) ` +
          `after the host started`,
      };
    }
  }
  return { kind: "owner", pid, rule: "outside every pane" };
}

/** Which pane marker an environment carries, or null. */
function markerOf(env: string[] | null, host: HostFacts): string | null {
  if (!env) return null;
  if (env.includes(`PANEFLOW_HOST_ID=${host.hostId}`)) return "this host's PANEFLOW_HOST_ID";
  if (
    env.includes(`PANEFLOW_SOCKET_PATH=${host.socketPath}`) &&
    env.some((e) => e.startsWith("PANEFLOW_SURFACE_ID="))
  ) {
    return "PANEFLOW_SURFACE_ID";
  }
  return null;
}

/** How a caller is named in messages: `owner`, `pane 3 "worker-1"`, `guest (pid 812)`. */
export function callerName(caller: Caller, nameOf: (id: number) => string | null = () => null): string {
  switch (caller.kind) {
    case "owner":
      return "the owner";
    case "host":
      return "the host";
    case "pane": {
      const name = nameOf(caller.surface_id);
      return `pane ${caller.surface_id}${name ? ` "${name}"` : ""}`;
    }
    case "guest":
      return `a guest${caller.pid ? ` (pid ${caller.pid})` : ""}`;
  }
}
