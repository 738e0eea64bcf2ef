/**
 * Finding and ending a pane's processes, wherever they went: in the pane's
 * session (background jobs of an interactive shell), in its process group,
 * or out of both (`setsid`, `nohup` + `setsid`, a daemonizing program) but
 * still carrying the pane's token or the host's id in their environment
 * (every process a pane starts inherits them unless it clears its
 * environment). Linux /proc only; elsewhere nothing is found.
 *
 * @module
 */
import { PANE_TOKEN_ENV } from "./hook_token.ts";

/** The environment variable naming the host that started a pane (random per host). */
export const HOST_ID_ENV = "PANEFLOW_HOST_ID";

/** Which processes belong to a pane, or to every pane of a host. */
export interface Match {
  /** Processes carrying PANEFLOW_HOST_ID=<hostId>. */
  hostId?: string;
  /** Processes carrying PANEFLOW_PANE_TOKEN=<token>. */
  token?: string;
  /** Processes whose session or process group is one of these (a pane's pid leads both). */
  sessions?: Iterable<number>;
}

/** A process found: pid, its start time (to tell a reused pid) and argv. */
export interface Found {
  pid: number;
  start: string;
  argv: string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** state, pgrp, session and start time out of /proc/<pid>/stat. */
function parseStat(stat: string): { state: string; pgrp: number; session: number; start: string } | null {
  const close = stat.lastIndexOf(")");
  if (close < 0) return null;
  const f = stat.slice(close + 2).split(" ");
  return { state: f[0], pgrp: Number(f[2]), session: Number(f[3]), start: f[19] };
}

async function argvOf(pid: number): Promise<string[]> {
  try {
    return (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** What a scan keeps of a process: enough to match any {@link Match}. */
export interface ProcessEntry extends Found {
  pgrp: number;
  session: number;
  /** Its PANEFLOW_HOST_ID=... and PANEFLOW_PANE_TOKEN=... entries. */
  tags: string[];
}

/** Where a scan's process table comes from: read here, or by a worker (the host's). */
export type ProcessTable = () => Promise<ProcessEntry[]>;

/**
 * One pass over /proc at a time, shared by every caller that asks while it
 * runs: a clean stop closes every pane at once, and each pane's escalation
 * would otherwise read every process's environment again.
 */
export function sharedTable(read: ProcessTable): ProcessTable {
  let inflight: Promise<ProcessEntry[]> | null = null;
  return () => inflight ??= read().finally(() => (inflight = null));
}

/**
 * Reads the process table with synchronous reads: ~2 small files per
 * process, where the same reads through the async file API queue behind
 * each other on a loaded machine for hundreds of ms. For hundreds of
 * processes that is tens of ms of one thread, so the host has its worker
 * do it (`ProcScanner.table`, ../pane/proc_scan.ts): on its main
 * thread, a pane closed every 200 ms put the soak's `system.ping` p99 at
 * 40–57 ms.
 */
export function readProcessTable(): ProcessEntry[] {
  const out: ProcessEntry[] = [];
  const dec = new TextDecoder();
  const seen = new Map<number, TagsOf>();
  try {
    for (const e of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(e.name)) continue;
      const pid = Number(e.name);
      if (pid === Deno.pid) continue;
      try {
        const st = parseStat(Deno.readTextFileSync(`/proc/${pid}/stat`));
        if (!st || st.state === "Z" || st.state === "X") continue;
        let tags = knownTags.get(pid);
        if (tags === undefined || tags.start !== st.start) {
          tags = { start: st.start, tags: [] as string[] };
          try {
            tags.tags = dec.decode(Deno.readFileSync(`/proc/${pid}/environ`)).split("\0")
              .filter((v) => v.startsWith(`${HOST_ID_ENV}=`) || v.startsWith(`${PANE_TOKEN_ENV}=`));
          } catch { /* another user's */ }
        }
        seen.set(pid, tags);
        out.push({ pid, start: st.start, argv: [], pgrp: st.pgrp, session: st.session, tags: tags.tags });
      } catch { /* gone */ }
    }
  } catch { /* no /proc */ }
  knownTags = seen;
  return out;
}

/** A process's paneflow tags, read from its environment once (the same pid and start: the same process). */
interface TagsOf {
  start: string;
  tags: string[];
}

/**
 * The tags of every process of the last read. A process keeps the tags it
 * was started with: one that later execs with a cleared environment (`exec
 * env -i …`) was still started in a pane, and is still found by them.
 */
let knownTags = new Map<number, TagsOf>();

/** The table read on the calling thread (one process's startup sweep, the tests). */
// deno-lint-ignore require-await
const inline: ProcessTable = sharedTable(async () => readProcessTable());

/** Every live process (zombies are already dead) matching `m`, this process excepted. */
export async function findProcesses(m: Match, table: ProcessTable = inline): Promise<Found[]> {
  const sessions = new Set(m.sessions ?? []);
  const tags = [
    m.hostId ? `${HOST_ID_ENV}=${m.hostId}` : null,
    m.token ? `${PANE_TOKEN_ENV}=${m.token}` : null,
  ].filter((t): t is string => t !== null);
  if (!sessions.size && !tags.length) return [];
  const found: Found[] = [];
  for (const p of await table()) {
    if (sessions.has(p.session) || sessions.has(p.pgrp) || p.tags.some((t) => tags.includes(t))) {
      found.push({ pid: p.pid, start: p.start, argv: await argvOf(p.pid) });
    }
  }
  return found;
}

/** Whether this very process (same pid, same start time) still runs. */
function alive(p: Found): boolean {
  try {
    const st = parseStat(Deno.readTextFileSync(`/proc/${p.pid}/stat`));
    return st !== null && st.start === p.start && st.state !== "Z" && st.state !== "X";
  } catch {
    return false;
  }
}

function signal(list: Found[], sig: Deno.Signal) {
  for (const p of list) {
    if (!alive(p)) continue;
    try {
      Deno.kill(p.pid, sig);
    } catch { /* gone */ }
  }
}

/**
 * SIGHUP to every process matching `m`; those still running after
 * `graceMs` get SIGKILL (and whatever they started meanwhile, found by a
 * fresh scan). Resolves with what had to be killed.
 */
export async function escalate(m: Match, graceMs: number, table: ProcessTable = inline): Promise<Found[]> {
  let list = await findProcesses(m, table);
  if (!list.length) return [];
  signal(list, "SIGHUP");
  const deadline = Date.now() + graceMs;
  let wait = 5;
  while ((list = list.filter(alive)).length && Date.now() < deadline) {
    await sleep(Math.min(wait, Math.max(1, deadline - Date.now())));
    wait = Math.min(wait * 2, 50);
  }
  // Whatever outlived the grace, and whatever was started meanwhile; then again for what was
  // started between that scan and the SIGKILL.
  const killed: Found[] = [];
  for (let round = 0; round < 5; round++) {
    list = list.filter(alive);
    for (const p of await findProcesses(m, table)) if (!list.some((q) => q.pid === p.pid)) list.push(p);
    if (!list.length) break;
    signal(list, "SIGKILL");
    for (const p of list) if (!killed.some((k) => k.pid === p.pid)) killed.push(p);
    const until = Date.now() + 200;
    while ((list = list.filter(alive)).length && Date.now() < until) await sleep(5);
  }
  return killed;
}

/** A random id for a host (its panes carry it as PANEFLOW_HOST_ID). */
export function newHostId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
