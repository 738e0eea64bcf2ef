/**
 * What runs in a pane, from Linux /proc: the PTY's foreground process group
 * leader, its full argv and its working directory.
 *
 * @module
 */

/** The foreground process of a PTY whose session leader is `pid`. */
export interface Foreground {
  pid: number;
  argv: string[];
  cwd: string | null;
}

/** Parses the tpgid (foreground process group of the tty) out of /proc/<pid>/stat. */
export function parseTpgid(stat: string): number | null {
  const close = stat.lastIndexOf(")");
  if (close < 0) return null;
  const fields = stat.slice(close + 2).split(" ");
  const tpgid = Number(fields[5]);
  return Number.isInteger(tpgid) && tpgid > 0 ? tpgid : null;
}

/** A process's argv from /proc, or null when it is gone. */
export function readArgv(pid: number): string[] | null {
  try {
    const raw = Deno.readTextFileSync(`/proc/${pid}/cmdline`);
    const argv = raw.split("\0");
    if (argv.at(-1) === "") argv.pop();
    return argv.length ? argv : null;
  } catch {
    return null;
  }
}

/** A process's working directory from /proc, or null when it is gone. */
export function readCwd(pid: number): string | null {
  try {
    return Deno.readLinkSync(`/proc/${pid}/cwd`);
  } catch {
    return null;
  }
}

/** Reads the foreground process of the PTY led by `pid`; null once it is gone. */
export function foreground(pid: number): Foreground | null {
  let fg = pid;
  try {
    fg = parseTpgid(Deno.readTextFileSync(`/proc/${pid}/stat`)) ?? pid;
  } catch {
    return null;
  }
  const argv = readArgv(fg) ?? readArgv(pid);
  if (!argv) return null;
  const owner = readArgv(fg) ? fg : pid;
  return { pid: owner, argv, cwd: readCwd(owner) };
}

/** A process: pid, process group and argv. */
export interface ProcessInfo {
  pid: number;
  pgrp: number;
  argv: string[];
}

/** Parses the pgrp (process group) field of /proc/<pid>/stat. */
export function parsePgrp(stat: string): number | null {
  const close = stat.lastIndexOf(")");
  if (close < 0) return null;
  const pgrp = Number(stat.slice(close + 2).split(" ")[2]);
  return Number.isInteger(pgrp) ? pgrp : null;
}

function addMember(groups: Map<number, ProcessInfo[]>, pid: number, pgrp: number) {
  const argv = readArgv(pid);
  if (!argv) return;
  const list = groups.get(pgrp) ?? [];
  list.push({ pid, pgrp, argv });
  groups.set(pgrp, list);
}

/** The foreground process group id of the PTY led by `pid`. */
export function foregroundGroup(pid: number): number | null {
  try {
    return parseTpgid(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return null;
  }
}

/**
 * The leader of each given process group and the leader's children in that
 * group: a few small reads, no /proc scan. That finds a program the group's
 * leader is, or that a shell leading it runs (`sh -c claude`), not one deeper
 * down.
 */
export function groupHeads(only: Set<number>): Map<number, ProcessInfo[]> {
  const groups = new Map<number, ProcessInfo[]>();
  for (const pgrp of only) {
    addMember(groups, pgrp, pgrp);
    for (const child of childrenOf(pgrp)) {
      try {
        if (parsePgrp(Deno.readTextFileSync(`/proc/${child}/stat`)) === pgrp) addMember(groups, child, pgrp);
      } catch { /* gone */ }
    }
  }
  return groups;
}

function childrenOf(pid: number): number[] {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/task/${pid}/children`).split(" ").filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** The members of the given process groups: one /proc scan. */
export function processGroups(only: Set<number>): Map<number, ProcessInfo[]> {
  const groups = new Map<number, ProcessInfo[]>();
  if (!only.size) return groups;
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const pid = Number(entry.name);
    let pgrp: number | null;
    try {
      pgrp = parsePgrp(Deno.readTextFileSync(`/proc/${pid}/stat`));
    } catch {
      continue;
    }
    if (pgrp === null || !only.has(pgrp)) continue;
    addMember(groups, pid, pgrp);
  }
  return groups;
}

/**
 * The members of each PTY's foreground process group, by the PTY session
 * leader's pid (null: that process is gone). `quick` reads only each group's
 * leader and its children ({@link groupHeads}); otherwise one /proc scan
 * ({@link processGroups}). Synchronous: the host runs it in its /proc worker
 * (./proc_scan.ts), off the main thread.
 */
export function foregroundMembers(pids: number[], quick: boolean): Map<number, ProcessInfo[] | null> {
  const groupOf = new Map<number, number>();
  for (const pid of pids) {
    const g = foregroundGroup(pid);
    if (g !== null) groupOf.set(pid, g);
  }
  const wanted = new Set(groupOf.values());
  const groups = quick ? groupHeads(wanted) : processGroups(wanted);
  const out = new Map<number, ProcessInfo[] | null>();
  for (const pid of pids) {
    const g = groupOf.get(pid);
    out.set(pid, g === undefined ? null : groups.get(g) ?? []);
  }
  return out;
}
