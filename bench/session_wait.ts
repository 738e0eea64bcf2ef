/**
 * `session.wait` latency (docs/ptywright.md): from the matching output to the wait's
 * answer (its last byte read by the client, before the client parses it). A
 * session runs bench/_stamp.ts, which prints `<token> <wall-clock
 * ms>` the moment it reads a line; connection A has a `session.wait` for the
 * token pending, connection B types the token. Latency = arrival of A's
 * answer − the stamp in its evidence. Measured with the host idle and with
 * 20 other panes each `cat`-ing a big file in a loop (targets: p50 ≤ 2 ms
 * idle, p99 ≤ 20 ms busy). Also in the same run: the round trip of the same
 * wait once it is already satisfied (request → the answer's last byte), the
 * raw limit (the stamp program in a PTY this process reads itself), and a
 * `session.list` round trip on the same connection (what any answer costs).
 *
 * Every answer carries a full snapshot (ptywright's shape: every cell, ~190
 * bytes each, so ~370 KB at 24x80); `--rows/--cols` change the session's size.
 *
 *   deno run -A bench/session_wait.ts [--rounds N] [--warmup N] [--panes N] [--file-mib N] [--rows N] [--cols N]
 *
 * Prints a table and writes bench/out/session_wait.json.
 *
 * @module
 */
import { startHost, waitUntil } from "../tests/_harness.ts";
import { connectSocket, type PwClient } from "../tests/_pw.ts";
import { percentile } from "../tests/_stream.ts";
import pty from "@lydell/node-pty";

const ROOT = new URL("../", import.meta.url).pathname;
const STAMP = `${ROOT}bench/_stamp.ts`;

function parse(args: string[]) {
  const o = { rounds: 200, warmup: 100, panes: 20, fileMib: 8, rows: 24, cols: 80 };
  for (let i = 0; i < args.length; i++) {
    const key = args[i].replace(/^--/, "").replace(/-(\w)/g, (_, c) => c.toUpperCase()) as keyof typeof o;
    if (!(key in o)) throw new Error(`Unknown option ${args[i]}`);
    o[key] = Number(args[++i]);
  }
  return o;
}

const wall = () => performance.timeOrigin + performance.now();

async function rounds(a: PwClient, b: PwClient, session: string, n: number, tag: string) {
  const waits: number[] = [];
  const satisfied: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < n; i++) {
    const token = `${tag}${i}x`;
    const pending = a.request("session.wait", {
      session,
      matcher: { type: "transcript_contains", value: `${token} ` },
      timeout_ms: 10000,
    }).then((m) => ({ m, at: a.arrivals[a.messages.indexOf(m)] }));
    // The wait is registered before the token is typed: a list round trip on A's connection would
    // queue behind the wait, so B asks the host a cheap question first (the wait's request was
    // written before it).
    await b.call("session.list");
    await b.call("session.input", { session, action: { type: "text", value: `${token}\n` } });
    const { m, at } = await pending;
    if (m.error) throw new Error(`wait failed: ${m.error.message}`);
    const found = new RegExp(`${token} (\\d+\\.\\d+)`).exec(m.result.transcript_tail);
    if (!found) throw new Error(`no stamp for ${token}`);
    waits.push(at - Number(found[1]));
    // The same wait again: already satisfied, so it is answered at once (request → answer's last byte).
    const t1 = wall();
    const again = await a.request("session.wait", {
      session,
      matcher: { type: "transcript_contains", value: `${token} ` },
      timeout_ms: 10000,
    });
    if (again.error) throw new Error(`wait failed: ${again.error.message}`);
    satisfied.push(a.arrivals[a.messages.indexOf(again)] - t1);
    const t0 = wall();
    await a.call("session.list");
    floor.push(wall() - t0);
    // Each answer parses to ~2,000 cell objects: kept, 2 x `n` of them make the bench's own
    // collector pauses part of what it measures.
    a.forget();
    b.forget();
  }
  return { waits, satisfied, floor };
}

/**
 * The raw limit: the same stamp program in a PTY this process reads itself
 * (node-pty), latency = the chunk's arrival − its stamp.
 */
async function rawLimit(n: number, tag: string): Promise<number[]> {
  const p = pty.spawn("/bin/sh", [
    "-c",
    `stty -echo; exec '${Deno.execPath()}' run --quiet --no-config '${STAMP}'`,
  ], {
    cols: 80,
    rows: 24,
    env: Deno.env.toObject(),
  });
  let buf = "";
  let waiter: (() => void) | null = null;
  const arrivals: { text: string; at: number }[] = [];
  p.onData((d) => {
    arrivals.push({ text: d, at: wall() });
    buf += d;
    waiter?.();
  });
  const seen = async (token: string) => {
    while (!new RegExp(`${token} \\d+\\.\\d+`).test(buf)) await new Promise<void>((r) => (waiter = r));
  };
  const out: number[] = [];
  try {
    p.write("warm\n");
    await seen("warm");
    for (let i = 0; i < n; i++) {
      const token = `${tag}${i}x`;
      const from = arrivals.length;
      p.write(`${token}\n`);
      await seen(token);
      const hit = arrivals.slice(from).find((a) => a.text.includes(`${token} `)) ?? arrivals.at(-1)!;
      const stamp = Number(new RegExp(`${token} (\\d+\\.\\d+)`).exec(buf)![1]);
      out.push(hit.at - stamp);
    }
  } finally {
    p.kill();
  }
  return out;
}

const stats = (v: number[]) => ({
  p50: +percentile(v, 50).toFixed(2),
  p99: +percentile(v, 99).toFixed(2),
  max: +Math.max(...v).toFixed(2),
});

if (import.meta.main) {
  const o = parse(Deno.args);
  const h = await startHost({ config: `{ "host": { "idle_timeout_secs": 600 } }` });
  const dir = await Deno.makeTempDir({ prefix: "pf-bench-" });
  try {
    const a = await connectSocket(h.socket);
    const b = await connectSocket(h.socket);
    const { session } = await a.client.call("session.create", {
      program: "/bin/sh",
      args: ["-c", `stty -echo; exec '${Deno.execPath()}' run --quiet --no-config '${STAMP}'`],
      rows: o.rows,
      cols: o.cols,
    });
    await b.client.call("session.input", { session, action: { type: "text", value: "warmup\n" } });
    await a.client.call("session.wait", {
      session,
      matcher: { type: "transcript_contains", value: "warmup " },
    });
    // The first answers of a fresh host run code V8 has not optimized yet: measured, and reported
    // apart as `cold`, not counted in the idle figures.
    const cold = await rounds(a.client, b.client, session, o.warmup, "cold");
    const idle = await rounds(a.client, b.client, session, o.rounds, "idle");
    const rawIdle = await rawLimit(o.rounds, "rawidle");

    const file = `${dir}/big.txt`;
    const line = "the quick brown fox jumps over the lazy dog 0123456789 \x1b[32mgreen\x1b[0m\n";
    await Deno.writeTextFile(file, line.repeat(Math.ceil((o.fileMib * 1024 * 1024) / line.length)));
    const busy: number[] = [];
    for (let i = 0; i < o.panes; i++) {
      const r = await h.call("workspace.create", {
        command: `while :; do cat '${file}'; done`,
      });
      busy.push(r.surface_id);
    }
    await waitUntil("busy panes streaming", async () => {
      const { surfaces } = await h.call("surface.list");
      return surfaces.filter((s) => s.output_generation > 10).length >= o.panes;
    }, { timeoutMs: 60000 });
    const loaded = await rounds(a.client, b.client, session, o.rounds, "busy");
    const rawBusy = await rawLimit(o.rounds, "rawbusy");

    const result = {
      rounds: o.rounds,
      panes: o.panes,
      size: `${o.cols}x${o.rows}`,
      load_average: Deno.loadavg(),
      cold: { rounds: o.warmup, wait_answer_ms: stats(cold.waits) },
      idle: {
        wait_answer_ms: stats(idle.waits),
        satisfied_wait_round_trip_ms: stats(idle.satisfied),
        raw_pty_read_ms: stats(rawIdle),
        list_round_trip_ms: stats(idle.floor),
      },
      busy: {
        wait_answer_ms: stats(loaded.waits),
        satisfied_wait_round_trip_ms: stats(loaded.satisfied),
        raw_pty_read_ms: stats(rawBusy),
        list_round_trip_ms: stats(loaded.floor),
      },
      targets: { idle_p50_ms: 2, busy_p99_ms: 20 },
      met: percentile(idle.waits, 50) <= 2 && percentile(loaded.waits, 99) <= 20,
    };
    console.log(
      `session.wait: matching output → answer (ms), ${o.cols}x${o.rows}, load ${Deno.loadavg()[0]}`,
    );
    console.log(
      `  cold (first ${o.warmup} answers of a fresh host) p50 ${result.cold.wait_answer_ms.p50}  p99 ${result.cold.wait_answer_ms.p99}`,
    );
    console.log(
      `  idle          p50 ${result.idle.wait_answer_ms.p50}  p99 ${result.idle.wait_answer_ms.p99}`,
    );
    console.log(
      `  ${o.panes} busy panes p50 ${result.busy.wait_answer_ms.p50}  p99 ${result.busy.wait_answer_ms.p99}`,
    );
    console.log(
      `  an already satisfied wait, round trip: idle p50 ${result.idle.satisfied_wait_round_trip_ms.p50} p99 ${result.idle.satisfied_wait_round_trip_ms.p99}, busy p50 ${result.busy.satisfied_wait_round_trip_ms.p50} p99 ${result.busy.satisfied_wait_round_trip_ms.p99}`,
    );
    console.log(
      `  raw limit (this process reads the PTY) idle p50 ${result.idle.raw_pty_read_ms.p50} p99 ${result.idle.raw_pty_read_ms.p99}, busy p50 ${result.busy.raw_pty_read_ms.p50} p99 ${result.busy.raw_pty_read_ms.p99}`,
    );
    console.log(
      `  floor (session.list round trip) idle p50 ${result.idle.list_round_trip_ms.p50}, busy p50 ${result.busy.list_round_trip_ms.p50}`,
    );
    console.log(`  targets met: ${result.met}`);
    await Deno.mkdir(`${ROOT}bench/out`, { recursive: true });
    await Deno.writeTextFile(`${ROOT}bench/out/session_wait.json`, JSON.stringify(result, null, 2) + "\n");
    a.conn.close();
    b.conn.close();
  } finally {
    await h.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}
