/**
 * No orphans: what ends a pane's processes when the host cannot.
 *
 * - **Closing a pane** (and a clean stop, which closes every pane): the
 *   host sends SIGHUP to the pane's session, process group and every
 *   process carrying the pane's token, and SIGKILL to what still runs
 *   after `terminal.kill_grace_ms` ({@link PaneReaper}, ./reap.ts).
 * - **The host killed** (SIGKILL, a crash, OOM): a watchdog, a small `sh`
 *   started with the host, holds the read end of a pipe only the host
 *   writes to. When the host dies the pipe reaches EOF and the watchdog
 *   kills every process carrying the host's PANEFLOW_HOST_ID and every
 *   process in a pane session the host reported to it. It ignores SIGHUP,
 *   SIGINT and SIGTERM, so a terminal's Ctrl-C or hang-up that ends a
 *   foreground host does not end it first.
 * - **Both killed** (`kill -9` of the whole process group): the host keeps a
 *   record next to its socket (host id, pid, pane sessions); the next
 *   `serve` on that socket ends what the record names and logs it
 *   ({@link sweepLeftovers}).
 *
 * @module
 */
import { escalate, findProcesses, type Found, HOST_ID_ENV } from "./reap.ts";

/**
 * The watchdog: reads pane session ids, one a line, until EOF (the host is
 * gone); then SIGHUP, a moment, and SIGKILL until nothing matches. One
 * grep (GNU -z: NUL-separated environments) and one awk over every
 * /proc/<pid>/stat do the scan: a loop of shell `read`s (dash reads a byte
 * per system call) took seconds on a loaded machine.
 */
const WATCHDOG = `
trap '' HUP INT TERM
host=$1
sessions=" "
# A line "PID" adds a pane session, "-PID" drops one (its pane was closed and reaped).
while IFS= read -r line; do
  case $line in
  -*) p=" \${line#-} "; case $sessions in *"$p"*) sessions="\${sessions%%"$p"*} \${sessions#*"$p"}" ;; esac ;;
  *) sessions="$sessions$line " ;;
  esac
done
pids() {
  grep -lzx "${HOST_ID_ENV}=$host" /proc/[0-9]*/environ 2>/dev/null | sed 's|^/proc/||; s|/environ$||'
  [ "$sessions" = " " ] && return
  cat /proc/[0-9]*/stat 2>/dev/null | awk -v s="$sessions" '
    BEGIN { n = split(s, a, " "); for (i = 1; i <= n; i++) S[a[i]] = 1 }
    { r = $0; sub(/.*[)] /, "", r); split(r, f, " "); if ((f[3] in S) || (f[4] in S)) print $1 }'
}
hit=$(pids)
[ -n "$hit" ] || exit 0
kill -HUP $hit 2>/dev/null
sleep 0.2
for round in 1 2 3 4 5; do
  hit=$(pids)
  [ -n "$hit" ] || exit 0
  kill -KILL $hit 2>/dev/null
  sleep 0.05
done
`;

/** The host's side of its watchdog. */
export interface Watchdog {
  /** Tells the watchdog about a pane's session (its pid). */
  addSession(pid: number): void;
  /** Tells the watchdog a session's pane was closed and reaped. */
  removeSession(pid: number): void;
  /** Closes the pipe: the watchdog sweeps once (normally finding nothing) and exits. */
  close(): void;
  /** The watchdog's pid. */
  pid: number;
}

/** Starts the watchdog of the host with id `hostId`; null where there is no /proc or sh. */
export function startWatchdog(hostId: string, log: (line: string) => void): Watchdog | null {
  if (Deno.build.os !== "linux") return null;
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command("/bin/sh", {
      args: ["-c", WATCHDOG, "paneflow-watchdog", hostId],
      stdin: "piped",
      stdout: "null",
      stderr: "null",
      // It must not carry the id it hunts for (a host started inside a pane carries its outer host's).
      env: { [HOST_ID_ENV]: "" },
    }).spawn();
  } catch (e) {
    log(`watchdog not started (${(e as Error).message}): panes may outlive a crashed host`);
    return null;
  }
  child.unref();
  child.status.catch(() => {});
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  let closed = false;
  return {
    pid: child.pid,
    addSession(pid) {
      if (!closed) writer.write(enc.encode(`${pid}\n`)).catch(() => {});
    },
    removeSession(pid) {
      if (!closed) writer.write(enc.encode(`-${pid}\n`)).catch(() => {});
    },
    close() {
      if (closed) return;
      closed = true;
      writer.close().catch(() => {});
    },
  };
}

/** What a host records next to its socket for the next `serve`. */
interface Record {
  host_id: string;
  pid: number;
  sessions: number[];
}

/** The record file of the host on `socketPath`. */
export function recordPath(socketPath: string): string {
  return `${socketPath}.panes.json`;
}

/**
 * Keeps the record of a host's panes next to its socket. Writes after the
 * first are asynchronous and one at a time, each with the newest state (a
 * pane opened every 200 ms put synchronous writes among the host's longest
 * main-thread stalls).
 */
export class HostRecord {
  #record: Record;
  #chain: Promise<void> = Promise.resolve();
  #dirty = false;
  constructor(private readonly _path: string, hostId: string) {
    this.#record = { host_id: hostId, pid: Deno.pid, sessions: [] };
    try {
      Deno.writeTextFileSync(this._path, JSON.stringify(this.#record), { mode: 0o600 });
    } catch { /* the socket's directory went away */ }
  }
  addSession(pid: number): void {
    this.#record.sessions.push(pid);
    this.#save();
  }
  /** Drops a session whose pane was closed and reaped: the record does not grow with every pane ever opened. */
  removeSession(pid: number): void {
    const i = this.#record.sessions.indexOf(pid);
    if (i < 0) return;
    this.#record.sessions.splice(i, 1);
    this.#save();
  }
  /** Removes the record (a clean stop), after any write still under way. */
  remove(): Promise<void> {
    return this.#chain = this.#chain.then(() => Deno.remove(this._path)).catch(() => {});
  }
  #save() {
    if (this.#dirty) return;
    this.#dirty = true;
    this.#chain = this.#chain.then(() => {
      this.#dirty = false;
      return Deno.writeTextFile(this._path, JSON.stringify(this.#record), { mode: 0o600 });
    }).catch(() => {/* the socket's directory went away */});
  }
}

function describe(list: Found[]): string {
  const shown = list.slice(0, 8).map((p) => `${p.pid} ${p.argv.join(" ").slice(0, 60)}`);
  return shown.join("; ") + (list.length > 8 ? `; and ${list.length - 8} more` : "");
}

/**
 * Ends what the previous host on `socketPath` left running (its record
 * names it) and logs what that was. Called once the socket is claimed: no
 * host answers on it, so its record is stale. A record whose host still
 * runs (it lost its socket file but lives on) is left alone.
 */
export async function sweepLeftovers(socketPath: string, log: (line: string) => void): Promise<Found[]> {
  const path = recordPath(socketPath);
  let rec: Record;
  try {
    rec = JSON.parse(await Deno.readTextFile(path));
    if (typeof rec.host_id !== "string" || !Array.isArray(rec.sessions)) throw new Error("bad record");
  } catch {
    return [];
  }
  try {
    const cmd = await Deno.readTextFile(`/proc/${rec.pid}/cmdline`);
    if (rec.pid !== Deno.pid && cmd.includes("serve")) {
      log(`the previous host (pid ${rec.pid}) still runs without its socket; its panes are left alone`);
      return [];
    }
  } catch { /* gone, as expected */ }
  const match = { hostId: rec.host_id, sessions: rec.sessions.filter(Number.isInteger) };
  const left = await findProcesses(match);
  await escalate(match, 200);
  await Deno.remove(path).catch(() => {});
  log(
    left.length
      ? `the previous host (pid ${rec.pid}) did not stop cleanly and left ${left.length} process(es) of its panes running; ended: ${
        describe(left)
      }`
      : `the previous host (pid ${rec.pid}) did not stop cleanly; nothing of its panes was left running`,
  );
  return left;
}
