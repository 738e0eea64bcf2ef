/**
 * Event latency (docs/performance.md), measured in one run:
 *
 * 1. Output → `surface_changed` frame: a pane runs bench/_stamp.ts, which
 *    prints a wall-clock timestamp the moment it reads a line; an unfiltered
 *    `events.subscribe` connection notes when the pane's next frame arrives.
 *    Latency = arrival − stamp, p50/p99, with the host idle and with 20 other
 *    panes each streaming `cat` of a big file in a loop (target p99 ≤ 20 ms).
 *    The peer is tmux's own push channel: a control-mode client's `%output`
 *    line for the same stamp pane, idle and with 20 windows streaming.
 * 2. `wait --pattern` detection: from the marker being printed (its stamp) to
 *    the `paneflow wait` process having exited, against a tmux polling loop
 *    (`tmux capture-pane -p | grep` every 500 ms and every 50 ms) timed the
 *    same way, each trial sending the marker at a random phase.
 *
 *   deno run -A bench/events.ts [--rounds N] [--fanout-secs N] [--trials N] [--panes N]
 *                               [--file-mib N] [--workers N]
 *
 * Under fan-out one round can take a few hundred ms, so that phase stops
 * after --fanout-secs (default 20) even if fewer than --rounds were done.
 *
 * Prints a table and writes bench/out/events.json.
 *
 * @module
 */
import { startHost, type TestHost, waitUntil } from "../tests/_harness.ts";
import {
  type EventStream,
  hostConnections,
  percentile,
  RpcConn,
  spawnCli,
  subscribe,
} from "../tests/_stream.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const STAMP = `${ROOT}bench/_stamp.ts`;
const STAMP_CMD = `stty -echo; exec '${Deno.execPath()}' run --quiet --no-config '${STAMP}'`;
/** The target for output → frame p99 under fan-out. */
const TARGET_P99_MS = 20;

interface Options {
  rounds: number;
  fanoutSecs: number;
  trials: number;
  panes: number;
  fileMib: number;
  /** host.pane_workers; 0 keeps the host's default. */
  workers: number;
}

function parseOptions(args: string[]): Options {
  const o: Options = { rounds: 300, fanoutSecs: 20, trials: 12, panes: 20, fileMib: 8, workers: 0 };
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split("=", 2);
    const key = flag.replace(/^--/, "").replace(/-(\w)/g, (_, c) => c.toUpperCase()) as keyof Options;
    if (!(key in o)) throw new Error(`Unknown option "${flag}"`);
    const value = Number(inline ?? args[++i]);
    if (!Number.isFinite(value) || value < 0) throw new Error(`Option "${flag}" needs a positive number`);
    o[key] = value;
  }
  return o;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const wall = (perfNow: number) => performance.timeOrigin + perfNow;

interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

function stats(xs: number[]): Stats {
  const r = (x: number) => Math.round(x * 100) / 100;
  return {
    n: xs.length,
    p50: r(percentile(xs, 50)),
    p99: r(percentile(xs, 99)),
    mean: r(xs.reduce((a, b) => a + b, 0) / xs.length),
    max: r(Math.max(...xs)),
  };
}

/** The stamp printed after `token`, from the newest lines of a screen. */
function stampOf(text: string, token: string): number | null {
  for (const line of text.split("\n").reverse()) {
    const m = line.match(/^(\S+) (\d+\.\d+)\s*$/);
    if (m && m[1] === token) return Number(m[2]);
  }
  return null;
}

async function newPane(rpc: RpcConn, host: TestHost, command: string): Promise<number> {
  const r = await rpc.call("workspace.create", { command, cwd: host.dir });
  return r.surface_id;
}

async function readText(rpc: RpcConn, id: number, lines = 20): Promise<string> {
  return (await rpc.call("surface.read", { surface_id: id, lines, fenced: false })).text;
}

/** Sends a line to a stamp pane and returns its stamp once it shows. */
async function stampLine(rpc: RpcConn, id: number, token: string): Promise<number> {
  await rpc.call("surface.send_text", { surface_id: id, text: `${token}\r` });
  return await waitUntil(`the stamp of ${token}`, async () => stampOf(await readText(rpc, id), token), {
    intervalMs: 5,
  });
}

/** Output → frame latency over `rounds` lines sent to the stamp pane `id` (stopping after `maxMs`). */
async function frameLatency(
  rpc: RpcConn,
  events: EventStream,
  id: number,
  { rounds, maxMs = Infinity }: { rounds: number; maxMs?: number },
): Promise<number[]> {
  const out: number[] = [];
  const until = performance.now() + maxMs;
  for (let i = 0; i < rounds && performance.now() < until; i++) {
    const token = `r${i}`;
    const from = events.frames.length;
    await rpc.call("surface.send_text", { surface_id: id, text: `${token}\r` });
    await events.waitFor(
      `the frame for ${token}`,
      (f) => f.type === "surface_changed" && f.surface_id === id,
      { from },
    );
    const at = events.frames.findIndex((f, k) =>
      k >= from && f.type === "surface_changed" && f.surface_id === id
    );
    const stamp = await waitUntil(
      `the stamp of ${token}`,
      async () => stampOf(await readText(rpc, id, 5), token),
      { intervalMs: 2 },
    );
    out.push(wall(events.times[at]) - stamp);
  }
  return out;
}

/** Time from a marker's stamp to `paneflow wait --pattern` having exited, per trial. */
async function paneflowWait(host: TestHost, rpc: RpcConn, id: number, trials: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < trials; i++) {
    const marker = `PFMARK-${i}`;
    const base = hostConnections(host.socket);
    const child = spawnCli(
      ["wait", "--match", String(id), "--pattern", `^${marker} `, "--timeout", "30"],
      host.env,
    );
    await waitUntil("wait to connect", () => {
      if (child.done()) throw new Error(`wait exited early: ${child.stderr()}`);
      return hostConnections(host.socket) >= base + 2;
    });
    await sleep(300 + Math.random() * 500); // settle into the wait; random phase
    await rpc.call("surface.send_text", { surface_id: id, text: `${marker}\r` });
    const code = await child.status;
    if (code !== 0) throw new Error(`wait exited ${code}: ${child.stderr()}`);
    const stamp = stampOf(await readText(rpc, id), marker);
    if (stamp === null) throw new Error(`No stamp for ${marker}`);
    out.push(wall(child.exitedAt()!) - stamp);
  }
  return out;
}

/** A private tmux server running the stamp program. */
class TmuxStamp {
  readonly name = `pfev-${Deno.pid}`;
  #calls = 0;

  async cmd(...args: string[]): Promise<string> {
    const out = await new Deno.Command("tmux", {
      args: ["-L", this.name, "-f", "/dev/null", ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(`tmux ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
    return new TextDecoder().decode(out.stdout);
  }

  async start() {
    await this.cmd("new-session", "-d", "-s", "b", "-x", "200", "-y", "50", STAMP_CMD);
  }

  async line(token: string): Promise<number> {
    await this.cmd("send-keys", "-t", "b", token, "Enter");
    return await waitUntil(
      `tmux stamp of ${token}`,
      async () => stampOf(await this.cmd("capture-pane", "-p", "-t", "b"), token),
      {
        intervalMs: 5,
      },
    );
  }

  /** Time from a marker's stamp to a `capture-pane | grep` loop with `everyMs` having exited. */
  async poll(everyMs: number, trials: number): Promise<number[]> {
    const out: number[] = [];
    for (let i = 0; i < trials; i++) {
      const marker = `TMMARK-${everyMs}-${i}`;
      const loop = `until tmux -L ${this.name} capture-pane -p -t b | grep -q '^${marker} '; do sleep ${
        everyMs / 1000
      }; done`;
      const child = new Deno.Command("sh", { args: ["-c", loop], stdout: "null", stderr: "piped" }).spawn();
      let exitedAt = 0;
      const status = child.status.then((s) => {
        exitedAt = performance.now();
        return s;
      });
      await sleep(300 + Math.random() * 500); // the loop is polling by now; random phase
      await this.cmd("send-keys", "-t", "b", marker, "Enter");
      const s = await status;
      if (!s.success) throw new Error(`tmux poll loop exited ${s.code}`);
      const stamp = stampOf(await this.cmd("capture-pane", "-p", "-t", "b"), marker);
      if (stamp === null) throw new Error(`No tmux stamp for ${marker}`);
      out.push(wall(exitedAt) - stamp);
    }
    return out;
  }

  /** Starts `n` more windows, each `cat`-ing `file` in a loop. */
  async flood(n: number, file: string) {
    for (let i = 0; i < n; i++) {
      await this.cmd("new-window", "-d", "-t", "b:", `while :; do cat '${file}'; done`);
    }
  }

  /**
   * The peer of output → frame: a control-mode client (`tmux -C`) gets every
   * pane's output as `%output` lines; latency = arrival of the stamp pane's
   * line − its stamp. Also returns how fast tmux delivered output to it.
   */
  async controlLatency(
    { rounds, maxMs = Infinity }: { rounds: number; maxMs?: number },
  ): Promise<{ samples: number[]; mib_per_s: number }> {
    const child = new Deno.Command("tmux", {
      args: ["-L", this.name, "-f", "/dev/null", "-C", "attach-session", "-t", "b"],
      env: { ...Deno.env.toObject(), TMUX: "" },
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const writer = child.stdin.getWriter();
    const prefix = `c${++this.#calls}r`;
    const stampPane = (await this.cmd("display-message", "-p", "-t", "b:0", "#{pane_id}")).trim();
    const arrivals = new Map<string, number>();
    let bytes = 0;
    const reading = (async () => {
      let buf = "";
      for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
        const now = performance.now();
        bytes += chunk.length;
        buf += chunk;
        let nl: number;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          const m = line.startsWith(`%output ${stampPane} `) && line.match(/(c\d+r\d+) \d+\.\d+/);
          if (m && !arrivals.has(m[1])) arrivals.set(m[1], now);
        }
      }
    })();
    const out: number[] = [];
    const t0 = performance.now();
    const until = t0 + maxMs;
    try {
      for (let i = 0; i < rounds && performance.now() < until; i++) {
        const token = `${prefix}${i}`;
        await writer.write(new TextEncoder().encode(`send-keys -t b:0 ${token} Enter\n`));
        await waitUntil(`tmux %output of ${token}`, () => arrivals.has(token), { intervalMs: 1 });
        const stamp = await waitUntil(
          `the tmux stamp of ${token}`,
          async () => stampOf(await this.cmd("capture-pane", "-p", "-t", "b:0"), token),
          { intervalMs: 2 },
        );
        out.push(wall(arrivals.get(token)!) - stamp);
      }
    } finally {
      await writer.close().catch(() => {});
      child.kill();
      await reading.catch(() => {});
      await child.status;
    }
    const secs = (performance.now() - t0) / 1000;
    return { samples: out, mib_per_s: Math.round((bytes / 1048576 / secs) * 10) / 10 };
  }

  async stop() {
    await this.cmd("kill-server").catch(() => {});
  }
}

/** Runs the benchmark; returns what it writes to bench/out/events.json. */
export async function main(args: string[] = Deno.args): Promise<Record<string, unknown>> {
  const o = parseOptions(args);
  const started = performance.now();
  const host = await startHost(
    o.workers ? { config: JSON.stringify({ host: { pane_workers: o.workers } }) } : {},
  );
  const tmux = new TmuxStamp();
  const file = `${host.dir}/big.txt`;
  let rpc: RpcConn | null = null;
  let events: EventStream | null = null;
  const result: Record<string, unknown> = {};
  try {
    const line = "0123456789 the quick brown fox jumps over the lazy dog ".repeat(2) + "\n";
    await Deno.writeTextFile(file, line.repeat(Math.ceil((o.fileMib * 1024 * 1024) / line.length)));

    rpc = await RpcConn.open(host.socket);
    events = await subscribe(host.socket); // every pane's frames, like `paneflow watch`
    const stamp = await newPane(rpc, host, STAMP_CMD);
    await stampLine(rpc, stamp, "warm");

    console.error(`output → frame, idle (${o.rounds} lines)...`);
    await frameLatency(rpc, events, stamp, { rounds: 20 }); // warm-up
    const idle = await frameLatency(rpc, events, stamp, { rounds: o.rounds });

    console.error(`wait --pattern vs tmux polling (${o.trials} trials each)...`);
    const pfWait = await paneflowWait(host, rpc, stamp, o.trials);
    await tmux.start();
    await tmux.line("warm");
    const tm500 = await tmux.poll(500, o.trials);
    const tm50 = await tmux.poll(50, o.trials);

    console.error(`tmux -C %output, idle and under ${o.panes}-pane fan-out...`);
    await tmux.controlLatency({ rounds: 20 }); // warm-up
    const tmIdle = await tmux.controlLatency({ rounds: o.rounds });
    await tmux.flood(o.panes, file);
    await sleep(1000); // every window streaming
    const tmFan = await tmux.controlLatency({ rounds: o.rounds, maxMs: o.fanoutSecs * 1000 });
    await tmux.stop();

    console.error(`output → frame under ${o.panes}-pane fan-out...`);
    const fan: number[] = [];
    for (let i = 0; i < o.panes; i++) fan.push(await newPane(rpc, host, `while :; do cat '${file}'; done`));
    const streaming = new Set<number>(fan);
    await waitUntil("every fan-out pane to stream", () => {
      for (const f of events!.frames.slice(-2000)) {
        if (f.type === "surface_changed") streaming.delete(f.surface_id!);
      }
      return streaming.size === 0;
    }, { timeoutMs: 30_000 });
    const framesBefore = events.frames.length;
    const t0 = performance.now();
    const fanout = await frameLatency(rpc, events, stamp, { rounds: o.rounds, maxMs: o.fanoutSecs * 1000 });
    const fanSecs = (performance.now() - t0) / 1000;
    const fanFrames = events.frames.length - framesBefore;

    result.frame_latency_ms = {
      idle: stats(idle),
      fanout: stats(fanout),
      tmux_control_idle: stats(tmIdle.samples),
      tmux_control_fanout: stats(tmFan.samples),
    };
    result.tmux_control_fanout_mib_per_s = tmFan.mib_per_s;
    result.fanout = { panes: o.panes, file_mib: o.fileMib, frames_per_s: Math.round(fanFrames / fanSecs) };
    result.wait_detection_ms = {
      paneflow_wait: stats(pfWait),
      tmux_poll_500ms: stats(tm500),
      tmux_poll_50ms: stats(tm50),
    };
    result.samples = {
      idle,
      fanout,
      tmux_control_idle: tmIdle.samples,
      tmux_control_fanout: tmFan.samples,
      paneflow_wait: pfWait,
      tmux_poll_500ms: tm500,
      tmux_poll_50ms: tm50,
    };
  } finally {
    await events?.close();
    rpc?.close();
    await tmux.stop();
    await host.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "");
  const tmuxVersion = await new Deno.Command("tmux", { args: ["-V"], stdout: "piped" }).output()
    .then((r) => new TextDecoder().decode(r.stdout).trim()).catch(() => "");
  const out = {
    date: new Date().toISOString(),
    seconds: Math.round(seconds * 10) / 10,
    cpus: navigator.hardwareConcurrency,
    loadavg: load.trim(),
    deno: Deno.version.deno,
    tmux: tmuxVersion,
    options: o,
    target_p99_ms: TARGET_P99_MS,
    ...result,
  };
  printTable(out as unknown as Report);
  await Deno.mkdir(`${ROOT}bench/out`, { recursive: true });
  await Deno.writeTextFile(`${ROOT}bench/out/events.json`, JSON.stringify(out, null, 2) + "\n");
  console.log("wrote bench/out/events.json");
  return out;
}

interface Report {
  seconds: number;
  cpus: number;
  loadavg: string;
  options: Options;
  frame_latency_ms: { idle: Stats; fanout: Stats; tmux_control_idle: Stats; tmux_control_fanout: Stats };
  tmux_control_fanout_mib_per_s: number;
  fanout: { frames_per_s: number };
  wait_detection_ms: { paneflow_wait: Stats; tmux_poll_500ms: Stats; tmux_poll_50ms: Stats };
}

function printTable(r: Report) {
  const f = (x: number) => x.toFixed(1).padStart(8);
  const head = (title: string) =>
    `${title.padEnd(44)}${"p50".padStart(8)}${"p99".padStart(8)}${"mean".padStart(8)}`;
  const row = (name: string, s: Stats, extra = "") =>
    `  ${name.padEnd(42)}${f(s.p50)}${f(s.p99)}${f(s.mean)}  ${extra}`;
  const { idle, fanout } = r.frame_latency_ms;
  const w = r.wait_detection_ms;
  const ratio = (s: Stats) => `${(s.mean / w.paneflow_wait.mean).toFixed(1)}x paneflow's mean`;
  console.log("");
  console.log(head("output -> surface_changed frame (ms)"));
  console.log(row(`idle host (n=${idle.n})`, idle));
  console.log(
    row(
      `${r.options.panes} panes streaming cat (n=${fanout.n})`,
      fanout,
      `p99 target <= ${TARGET_P99_MS} ms: ${
        fanout.p99 <= TARGET_P99_MS ? "met" : "MISSED"
      }; ${r.fanout.frames_per_s} frames/s on the stream; ${(fanout.p99 / idle.p99).toFixed(1)}x idle p99`,
    ),
  );
  const tIdle = r.frame_latency_ms.tmux_control_idle;
  const tFan = r.frame_latency_ms.tmux_control_fanout;
  console.log(row(`tmux -C %output, idle (n=${tIdle.n})`, tIdle));
  console.log(
    row(
      `tmux -C %output, ${r.options.panes} panes (n=${tFan.n})`,
      tFan,
      `tmux paces the panes to its client: ${r.tmux_control_fanout_mib_per_s} MiB/s delivered`,
    ),
  );
  console.log("");
  console.log(head("marker printed -> waiter exited (ms)"));
  console.log(row(`paneflow wait --pattern (n=${w.paneflow_wait.n})`, w.paneflow_wait, "1.0x"));
  console.log(row(`tmux capture-pane | grep, every 500 ms`, w.tmux_poll_500ms, ratio(w.tmux_poll_500ms)));
  console.log(row(`tmux capture-pane | grep, every 50 ms`, w.tmux_poll_50ms, ratio(w.tmux_poll_50ms)));
  console.log(`\n${r.cpus} cpus, load ${r.loadavg.split(" ").slice(0, 3).join(" ")}, ${r.seconds} s`);
}

if (import.meta.main) {
  try {
    await main();
    Deno.exit(0);
  } catch (e) {
    console.error(`bench/events.ts failed: ${e instanceof Error ? e.stack ?? e.message : e}`);
    Deno.exit(1);
  }
}
