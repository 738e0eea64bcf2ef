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

/** Every live process (zombies are already dead) matching `m`, this process excepted. */
export async function findProcesses(m: Match): Promise<Found[]> {
  const sessions = new Set(m.sessions ?? []);
  const tags = [
    m.hostId ? `${HOST_ID_ENV}=${m.hostId}` : null,
    m.token ? `${PANE_TOKEN_ENV}=${m.token}` : null,
  ].filter((t): t is string => t !== null);
  if (!sessions.size && !tags.length) return [];
  const found: Found[] = [];
  let entries: AsyncIterable<Deno.DirEntry>;
  try {
    entries = Deno.readDir("/proc");
  } catch {
    return found;
  }
  try {
    for await (const e of entries) {
      if (!/^\d+$/.test(e.name)) continue;
      const pid = Number(e.name);
      if (pid === Deno.pid) continue;
      let st;
      try {
        st = parseStat(await Deno.readTextFile(`/proc/${pid}/stat`));
      } catch {
        continue;
      }
      if (!st || st.state === "Z" || st.state === "X") continue;
      let hit = sessions.has(st.session) || sessions.has(st.pgrp);
      if (!hit && tags.length) {
        try {
          const env = new TextDecoder().decode(await Deno.readFile(`/proc/${pid}/environ`)).split("\0");
          hit = tags.some((t) => env.includes(t));
        } catch { /* another user's, or gone */ }
      }
      if (hit) found.push({ pid, start: st.start, argv: await argvOf(pid) });
    }
  } catch { /* /proc unreadable */ }
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
export async function escalate(m: Match, graceMs: number): Promise<Found[]> {
  let list = await findProcesses(m);
  if (!list.length) return [];
  signal(list, "SIGHUP");
  const deadline = Date.now() + graceMs;
  let wait = 5;
  while ((list = list.filter(alive)).length && Date.now() < deadline) {
    await sleep(Math.min(wait, Math.max(1, deadline - Date.now())));
    wait = Math.min(wait * 2, 50);
  }
  const killed: Found[] = [];
  for (let round = 0; round < 5; round++) {
    list = list.filter(alive);
    const more = await findProcesses(m);
    for (const p of more) if (!list.some((q) => q.pid === p.pid)) list.push(p);
    if (!list.length) break;
    signal(list, "SIGKILL");
    killed.push(...list.filter((p) => !killed.some((k) => k.pid === p.pid)));
    await sleep(10);
    list = list.filter(alive);
  }
  return killed;
}

/** A random id for a host (its panes carry it as PANEFLOW_HOST_ID). */
export function newHostId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
