/**
 * `deno task soak [--minutes N] [--panes P] [--interval S] [--json]`: a long
 * run of a real host under mixed load, reporting what drifts.
 *
 * Load: P panes (default 100) of mixed programs — busy streams, idle shells,
 * `cat`s that are typed into — plus panes opened and closed all the time,
 * clients that `read` and `wait`, a live events subscriber that must see every
 * lifecycle event, and a subscriber that stops reading (it must be shed with a
 * `dropped` count, never block the host).
 *
 * Every interval it prints the host's RSS (the median of a reading every 5 s,
 * with their range), open descriptors, worker heaps and
 * event-queue depth (from `system.stats` when the host has it), and the
 * `system.ping` p99 of that interval (pings every 20 ms from a thread of their
 * own, bench/pinger.ts). At the end it checks the targets: RSS and
 * descriptors flat after warm-up (the median of the last fifth of the samples
 * within 5 % of the median of the fifth after the first; `--tolerance` to
 * change), no lifecycle event lost silently, ping p99 ≤ 5 ms (`--ping-p99`),
 * and exits 1 when one is missed. The host runs with the V8 flags a detached
 * host gets.
 *
 * @module
 */

import { startHost, type TestHost } from "../tests/_harness.ts";
import { percentile, RpcConn, subscribe } from "../tests/_stream.ts";
import { HOST_V8_FLAGS } from "../src/paths.ts";
import { cleanupAll, pingWorker } from "../bench/procs.ts";

interface Options {
  minutes: number;
  panes: number;
  interval: number;
  tolerance: number;
  pingP99: number;
  json: boolean;
}

/** Parses the soak's argv. */
export function parseSoakArgs(argv: string[]): Options {
  const o: Options = { minutes: 30, panes: 100, interval: 60, tolerance: 0.05, pingP99: 5, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = (name: string) => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v <= 0) throw new Error(`${name} needs a positive number, got "${argv[i]}"`);
      return v;
    };
    if (a === "--minutes") o.minutes = num(a);
    else if (a === "--panes") o.panes = Math.floor(num(a));
    else if (a === "--interval") o.interval = num(a);
    else if (a === "--tolerance") o.tolerance = num(a);
    else if (a === "--ping-p99") o.pingP99 = num(a);
    else if (a === "--json") o.json = true;
    else throw new Error(`Unknown option "${a}" (see the header of scripts/soak.ts)`);
  }
  return o;
}

/** One interval's figures. */
export interface Sample {
  at_s: number;
  /** The median of the interval's RSS readings (one every {@link RSS_EVERY_MS}). */
  rss_mib: number;
  /** The lowest and highest of them. */
  rss_range_mib: [number, number];
  fds: number;
  worker_heap_mib: number | null;
  /** What V8 holds for the workers' heaps (their committed pages). */
  worker_heap_total_mib: number | null;
  main_heap_mib: number | null;
  main_heap_total_mib: number | null;
  /** Times the workers handed freed memory back, and what it took (ms), so far. */
  trims: number | null;
  trim_ms: number | null;
  queue_depth: number | null;
  ping_p99_ms: number;
  pings: number;
  panes: number;
}

/** What a soak run found. */
export interface SoakResult {
  samples: Sample[];
  churned: number;
  lifecycle_seen: number;
  lifecycle_expected: number;
  shed_dropped: number;
  failures: string[];
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20 * 10) / 10;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
/**
 * How often the host's RSS is read. One reading an interval moved with the
 * collectors' phase (the workers' held heap swings by ~30 MiB between
 * collections: 218–278 MiB a minute apart in one 30-minute run); the
 * interval reports the median of its readings, and their range.
 */
const RSS_EVERY_MS = 5_000;

function procStatus(pid: number): { rss: number; fds: number } {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
  let fds = 0;
  for (const _ of Deno.readDirSync(`/proc/${pid}/fd`)) fds++;
  return { rss, fds };
}

const HISTORY_LINE = "a line of history, as a pane open all day has";
/**
 * What every quiet pane prints first: more history than the soak's
 * scrollback (2,000 lines) holds, so each pane starts as a pane open all day
 * does, with its history full. Started empty, the idle panes' history filled
 * with what the clients type for the whole half hour (74 panes, ~150 rows of
 * xterm's screen and staging rows each at 2.4 KB a 200-column row before the
 * compact store takes over): memory that is the panes' own data, bounded by
 * `scrollback_lines`, but growth all the same, which hid the one that was not.
 */
const HISTORY = `seq -f "%g: ${HISTORY_LINE}" 2200`;
/** The soak's pane programs, in turn: a steady stream, idle shells, a `cat` typed into. */
export const PROGRAMS = [
  // Busy: a steady log-like stream.
  'i=0; while :; do i=$((i+1)); echo "2025-01-11T07:12:58 INFO soak: line $i of a steady stream"; ' +
  "[ $((i % 50)) -eq 0 ] && sleep 0.1; done",
  `${HISTORY}; exec sh`, // idle shell
  `${HISTORY}; exec cat`, // typed into by clients
  `${HISTORY}; exec sh`, // idle shell
];

/** Opens and closes a workspace every 200 ms until `stop.now`; resolves with how many. */
export async function churn(socket: string, cwd: string, stop: { now: boolean }): Promise<number> {
  const c = await RpcConn.open(socket);
  let n = 0;
  while (!stop.now) {
    const ws = await c.call("workspace.create", { command: "echo churn", cwd });
    await c.call("workspace.close", { index: ws.index });
    n++;
    await new Promise((r) => setTimeout(r, 200));
  }
  c.close();
  return n;
}

/** Runs the soak against a fresh host; `log` gets one line per interval. */
export async function soak(o: Options, log: (line: string) => void): Promise<SoakResult> {
  // Run as `paneflow serve --detach` runs it: with the host's V8 flags (src/paths.ts).
  const host: TestHost = await startHost({
    config: '{"terminal":{"scrollback_lines":2000}}',
    denoFlags: [`--v8-flags=${HOST_V8_FLAGS}`],
  });
  const failures: string[] = [];
  const stop = { now: false };
  const tasks: Promise<unknown>[] = [];
  try {
    const { pid } = await host.call("system.identify");
    const rpc = await RpcConn.open(host.socket);
    const ids: number[] = [];
    for (let i = 0; i < o.panes - 2; i++) {
      const r = await rpc.call("workspace.create", {
        command: PROGRAMS[i % PROGRAMS.length],
        cwd: host.dir,
      });
      ids.push(r.surface_id);
    }
    // The history is the panes' setup, not the soak's load: it is printed before the clock starts.
    const quiet = ids.filter((_, i) => PROGRAMS[i % PROGRAMS.length].startsWith(HISTORY));
    const setupEnd = performance.now() + 120_000;
    for (const id of quiet) {
      while (
        !(await rpc.call("surface.read", { surface_id: id, lines: 60, fenced: false }))
          .text.includes(`2200: ${HISTORY_LINE}`)
      ) {
        if (performance.now() > setupEnd) throw new Error(`pane ${id} did not print its history in 120 s`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const live = await subscribe(host.socket, { types: ["workspace_created", "workspace_closed"] });
    const stalled = await subscribe(host.socket, { paused: true });

    // Churn: a workspace opened and closed, again and again (2 of the panes' budget).
    let churned = 0;
    tasks.push(churn(host.socket, host.dir, stop).then((n) => (churned = n)));
    // Readers and typists.
    tasks.push((async () => {
      const c = await RpcConn.open(host.socket);
      let n = 0;
      while (!stop.now) {
        const id = ids[n++ % ids.length];
        await c.call("surface.read", { surface_id: id, lines: 50 });
        if (n % 4 === 2) await c.call("surface.send_text", { surface_id: id, text: `typed ${n}\r` });
        await new Promise((r) => setTimeout(r, 50));
      }
      c.close();
    })());
    // Short-lived waiters: subscribe, see one change, go.
    tasks.push((async () => {
      let n = 0;
      while (!stop.now) {
        const s = await subscribe(host.socket, { surfaces: [ids[n++ % 8]], types: ["surface_changed"] });
        await s.waitFor("a change", (f) => f.type === "surface_changed", { timeoutMs: 10_000 }).catch(
          () => {},
        );
        s.close();
      }
    })());

    // Pings (from their own thread: this loop also drives the load above) and samples.
    const samples: Sample[] = [];
    const t0 = performance.now();
    const pinger = await pingWorker(host.socket, 20);
    const end = t0 + o.minutes * 60_000;
    while (performance.now() < end) {
      const until = Math.min(end, performance.now() + o.interval * 1000);
      const readings: number[] = [];
      do {
        await new Promise((r) =>
          setTimeout(r, Math.max(0, Math.min(RSS_EVERY_MS, until - performance.now())))
        );
        readings.push(procStatus(pid).rss);
      } while (performance.now() < until);
      const pings = await pinger.take();
      // A connection per sample: the host drops one that stays silent for its idle deadline (30 s).
      const stats = await RpcConn.open(host.socket);
      const { fds } = procStatus(pid);
      const st = (await stats.request("system.stats", {})).result as
        | {
          heap_used?: number;
          heap_total?: number;
          workers?: { heap_used: number; heap_total?: number; trims?: number; trim_ms?: number }[];
          bus?: { max_queue: number };
        }
        | undefined;
      const list = await stats.call("fleet.list").catch(() => ({ surfaces: [] }));
      stats.close();
      const s: Sample = {
        at_s: Math.round((performance.now() - t0) / 1000),
        rss_mib: Math.round(median(readings) * 10) / 10,
        rss_range_mib: [
          Math.round(Math.min(...readings) * 10) / 10,
          Math.round(Math.max(...readings) * 10) / 10,
        ],
        fds,
        worker_heap_mib: st?.workers ? mib(st.workers.reduce((a, w) => a + w.heap_used, 0)) : null,
        worker_heap_total_mib: st?.workers
          ? mib(st.workers.reduce((a, w) => a + (w.heap_total ?? 0), 0))
          : null,
        main_heap_mib: st?.heap_used ? mib(st.heap_used) : null,
        main_heap_total_mib: st?.heap_total ? mib(st.heap_total) : null,
        trims: st?.workers ? st.workers.reduce((a, w) => a + (w.trims ?? 0), 0) : null,
        trim_ms: st?.workers ? st.workers.reduce((a, w) => a + (w.trim_ms ?? 0), 0) : null,
        queue_depth: st?.bus?.max_queue ?? null,
        ping_p99_ms: Math.round(percentile(pings, 99) * 100) / 100,
        pings: pings.length,
        panes: (list as { surfaces?: unknown[] }).surfaces?.length ?? ids.length,
      };
      samples.push(s);
      log(
        `${String(s.at_s).padStart(5)} s  rss ${s.rss_mib} MiB (${
          s.rss_range_mib.join("–")
        })  fds ${s.fds}  heap used/held: main ${s.main_heap_mib ?? "n/a"}/${
          s.main_heap_total_mib ?? "n/a"
        } MiB, workers ${s.worker_heap_mib ?? "n/a"}/${s.worker_heap_total_mib ?? "n/a"} MiB  trims ${
          s.trims ?? "n/a"
        } (${s.trim_ms ?? "n/a"} ms)  queue ${
          s.queue_depth ?? "n/a"
        }  ping p99 ${s.ping_p99_ms} ms (${s.pings})`,
      );
    }
    stop.now = true;
    await Promise.allSettled(tasks);
    await pinger.stop();
    rpc.close();

    // Every churn open and close reached the live subscriber.
    const expected = churned * 2;
    const seen = () => live.of("workspace_created").length + live.of("workspace_closed").length;
    const deadline = Date.now() + 10_000;
    while (seen() < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    if (seen() < expected) failures.push(`live subscriber saw ${seen()} of ${expected} lifecycle events`);
    stalled.resume();
    const deadline2 = Date.now() + 10_000;
    while (!stalled.of("dropped").length && Date.now() < deadline2) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const dropped = stalled.of("dropped").reduce((a, f) => a + Number(f.count ?? 0), 0);
    live.close();
    stalled.close();

    // Flat after warm-up (a fifth of the run): the median of the last fifth of the samples against
    // the median of the fifth just after warm-up. A single reading moves with the collectors' phase,
    // a trend does not.
    const k = Math.max(1, Math.floor(samples.length / 5));
    const early = samples.slice(Math.min(samples.length - 1, k), Math.min(samples.length - 1, k) + k);
    const late = samples.slice(-k);
    if (samples.length > 1 && early[0] !== late[0]) {
      const [rss0, rss1] = [median(early.map((x) => x.rss_mib)), median(late.map((x) => x.rss_mib))];
      const [fds0, fds1] = [median(early.map((x) => x.fds)), median(late.map((x) => x.fds))];
      const span = (xs: Sample[]) => `${xs[0].at_s}–${xs.at(-1)!.at_s} s`;
      if (rss1 > rss0 * (1 + o.tolerance)) {
        failures.push(`RSS grew from ${rss0} MiB (median, ${span(early)}) to ${rss1} MiB (${span(late)})`);
      }
      if (fds1 > fds0 * (1 + o.tolerance) + 2) {
        failures.push(`descriptors grew from ${fds0} (median, ${span(early)}) to ${fds1} (${span(late)})`);
      }
    }
    const worstPing = Math.max(...samples.map((s) => s.ping_p99_ms));
    if (worstPing > o.pingP99) failures.push(`ping p99 reached ${worstPing} ms (target ${o.pingP99} ms)`);
    return {
      samples,
      churned,
      lifecycle_seen: seen(),
      lifecycle_expected: expected,
      shed_dropped: dropped,
      failures,
    };
  } finally {
    stop.now = true;
    await cleanupAll(); // the pinger's thread, if the soak failed before stopping it
    await host.stop();
  }
}

if (import.meta.main) {
  let o: Options;
  try {
    o = parseSoakArgs(Deno.args);
  } catch (e) {
    console.error(`soak: ${(e as Error).message}`);
    Deno.exit(2);
  }
  const r = await soak(o, (l) => console.error(l));
  if (o.json) console.log(JSON.stringify(r, null, 2));
  else {
    console.log(
      `churned ${r.churned} workspaces; lifecycle events ${r.lifecycle_seen}/${r.lifecycle_expected}; ` +
        `stalled subscriber shed with ${r.shed_dropped} dropped`,
    );
    console.log(r.failures.length ? `MISSED:\n  ${r.failures.join("\n  ")}` : "every target met");
  }
  Deno.exit(r.failures.length ? 1 : 0);
}
