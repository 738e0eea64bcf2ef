/**
 * paneflow benchmarks, each paired with tmux (or the raw limit) measured in
 * the same run. `deno task bench` prints a table and writes it as JSON to
 * bench/out/latest.json.
 *
 *   deno task bench [--only ingest,fanout,oneshot,read,memory,events] [--reps N]
 *                   [--ingest-mib N] [--fanout-mib N] [--panes N] [--runs N]
 *
 * Figures:
 * 1. single-stream ingest of a 100 MiB mixed ANSI file: spawn `cat` in a
 *    pane until the marker is visible and the pane has exited; vs tmux and
 *    vs a raw node-pty drain; plus lossless checks.
 * 2. 20 panes each `cat`-ing 10 MiB at once: aggregate MiB/s vs tmux, with
 *    `system.ping` round trips every 10 ms during it.
 * 3. one-shot `paneflow read` (a whole CLI process: the bundled CLI that
 *    `deno task build` writes and `deno task install` installs, and main.ts
 *    from source) vs `tmux capture-pane` vs a bare `deno run` of an empty
 *    script, and the floor: a one-file client that only connects, reads and
 *    prints (bench/oneshot_floor.js).
 * 4. `surface.read` of 200 lines over a persistent socket vs tmux
 *    `capture-pane` over a persistent control-mode client.
 * 5. memory per pane with 10k lines of history vs tmux.
 *
 * @module
 */
import { writeAnsiFile, writePlainFile } from "./gen.ts";
import { build } from "../scripts/build.ts";
import { type EventStream, type RpcConn, subscribe } from "../tests/_stream.ts";
import {
  cleanupAll,
  type Host,
  MAIN,
  onCleanup,
  pingWorker,
  ROOT,
  rss,
  run,
  settledRss,
  startHost,
  Tmux,
  TmuxControl,
  waitFor,
} from "./procs.ts";

// ---------------------------------------------------------------- options

const ALL = ["ingest", "fanout", "oneshot", "read", "memory", "events"] as const;
type Part = typeof ALL[number];

function parseOpts(args: string[]) {
  const o = {
    only: new Set<Part>(ALL),
    reps: 2,
    ingestMib: 100,
    fanoutMib: 10,
    panes: 20,
    runs: 50,
    readCalls: 500,
    memPanes: 10,
    memLines: 12_000,
    workers: 0, // 0: the host's default
  };
  for (let i = 0; i < args.length; i++) {
    const [k, v] = args[i].includes("=") ? args[i].split("=", 2) : [args[i], args[i + 1]];
    const take = () => {
      if (!args[i].includes("=")) i++;
      return v;
    };
    switch (k) {
      case "--only":
        o.only = new Set(take().split(",") as Part[]);
        for (const p of o.only) if (!ALL.includes(p)) throw new Error(`unknown part ${p}`);
        break;
      case "--reps":
        o.reps = Number(take());
        break;
      case "--ingest-mib":
        o.ingestMib = Number(take());
        break;
      case "--fanout-mib":
        o.fanoutMib = Number(take());
        break;
      case "--panes":
        o.panes = Number(take());
        break;
      case "--runs":
        o.runs = Number(take());
        break;
      case "--workers":
        o.workers = Number(take());
        break;
      default:
        throw new Error(`unknown option ${args[i]}`);
    }
  }
  return o;
}

// ---------------------------------------------------------------- output

interface Row {
  figure: string;
  ours: string;
  peer: string;
  ratio: string;
  target: string;
  pass: boolean | null;
  /** Raw numbers behind the row. */
  data?: Record<string, unknown>;
}

const rows: Row[] = [];
const details: Record<string, unknown> = {};

function row(r: Row) {
  rows.push(r);
  const mark = r.pass === null ? "" : r.pass ? "  PASS" : "  FAIL";
  console.error(`  ${r.figure}: ours ${r.ours} | ${r.peer} | ${r.ratio}${mark}`);
}

function printTable() {
  const head = ["figure", "ours", "peer", "ratio", "target", "pass"];
  const body = rows.map((r) => [
    r.figure,
    r.ours,
    r.peer,
    r.ratio,
    r.target,
    r.pass === null ? "-" : r.pass ? "PASS" : "FAIL",
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i])).join(" | ").trimEnd();
  console.log(line(head));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const b of body) console.log(line(b));
}

// ---------------------------------------------------------------- numbers

const MiB = 1024 * 1024;
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);

function quantile(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
const median = (xs: number[]) => quantile(xs, 0.5);

// ---------------------------------------------------------------- helpers

/** Watches `surface_exited` events. */
class ExitWatch {
  private constructor(readonly events: EventStream) {}
  static async open(host: Host): Promise<ExitWatch> {
    const ev = await subscribe(host.socket, { types: ["surface_exited"] });
    onCleanup(() => ev.close());
    return new ExitWatch(ev);
  }
  /** Resolves once every pane in `ids` has exited (output fully parsed). */
  async all(ids: number[], timeoutMs = 180_000): Promise<void> {
    await waitFor(`panes ${ids.join(",")} to exit`, () => {
      const exited = new Set(this.events.of("surface_exited").map((f) => f.surface_id));
      return ids.every((id) => exited.has(id));
    }, { timeoutMs, intervalMs: 1 });
  }
}

interface ReadResult {
  text: string;
  lines: number;
  total_lines: number;
}

function readPane(rpc: RpcConn, id: number, lines: number, offset = 0): Promise<ReadResult> {
  return rpc.call("surface.read", { surface_id: id, lines, offset, fenced: false });
}

async function closeWorkspaceOf(rpc: RpcConn, id: number) {
  try {
    await rpc.call("surface.close", { surface_id: id });
  } catch { /* best effort */ }
}

/** CPU time (ms) of each thread of a process, by "tid:name". */
function threadCpu(pid: number): Map<string, number> {
  const out = new Map<string, number>();
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      const stat = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/stat`);
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${t.name}:${name}`, (Number(f[11]) + Number(f[12])) * 10);
    }
  } catch { /* gone */ }
  return out;
}

/** CPU used per thread between two {@link threadCpu} readings, by thread name. */
function cpuDelta(before: Map<string, number>, after: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of after) {
    const name = k.slice(k.indexOf(":") + 1);
    out[name] = (out[name] ?? 0) + v - (before.get(k) ?? 0);
  }
  return out;
}

/** Waits until every tmux pane in `ids` is dead (the pane-died hook signals `pfdied`). */
async function tmuxWaitDead(t: Tmux, ids: string[]) {
  const want = new Set(ids);
  while (true) {
    const list = await t.must("list-panes", "-a", "-F", "#{pane_id} #{pane_dead}");
    const dead = list.trim().split("\n").filter((l) => {
      const [id, d] = l.split(" ");
      return want.has(id) && d === "1";
    }).length;
    if (dead === want.size) return;
    const r = await t.cmd("wait-for", "pfdied");
    if (r.code !== 0) throw new Error(`tmux wait-for: ${r.stderr}`);
  }
}

/** Highest `Lnnnnnnnn` line number visible in a capture, and whether `marker` is there. */
function tmuxTail(capture: string, marker: string) {
  let last = 0;
  for (const m of capture.matchAll(/^L(\d{8}) /gm)) last = Math.max(last, Number(m[1]));
  return { lastLine: last, marker: capture.includes(marker) };
}

function tmuxConf(size: string): string[] {
  return [
    "set -g history-limit 10000",
    "set -g remain-on-exit on",
    `set -g default-size ${size}`,
    "set -g status off",
    "set-hook -g pane-died 'wait-for -S pfdied'",
  ];
}

// ---------------------------------------------------------------- 1. ingest

async function benchIngest(
  o: ReturnType<typeof parseOpts>,
  host: Host,
  exits: ExitWatch,
  tmux: Tmux,
  file: Awaited<ReturnType<typeof writeAnsiFile>>,
  keep: { ours?: number; tmux?: string },
) {
  console.error(`ingest: ${f1(file.bytes / MiB)} MiB, ${file.lines} lines, ${o.reps} rep(s) each`);
  const mib = file.bytes / MiB;
  const ours: number[] = [];
  const tm: number[] = [];
  const raw: number[] = [];
  const tmuxLoss: { lastLine: number; marker: boolean }[] = [];
  let check: Record<string, unknown> = {};
  let rawBytesOk = true;
  for (let rep = 0; rep < o.reps; rep++) {
    // ours: workspace.create -> surface_exited (emitted only after xterm parsed
    // every byte) -> one read showing the marker.
    {
      const t0 = performance.now();
      const res = await host.rpc.call("workspace.create", {
        command: `cat '${file.path}'`,
      });
      const id = res.surface_id;
      await exits.all([id]);
      const last = await readPane(host.rpc, id, 1);
      const ms = performance.now() - t0;
      if (last.text !== file.marker) throw new Error(`ours: marker not visible; last line ${last.text}`);
      ours.push(ms);
      if (rep === 0) {
        // Lossless: the newest 4000 lines are exactly the file's last lines.
        const r = await readPane(host.rpc, id, file.tail.length);
        const got = r.text.split("\n");
        let mismatches = 0;
        let firstBad = -1;
        for (let i = 0; i < file.tail.length; i++) {
          if (got[i] !== file.tail[i]) {
            mismatches++;
            if (firstBad < 0) firstBad = i;
          }
        }
        check = {
          tail_lines_compared: file.tail.length,
          tail_mismatches: mismatches + Math.abs(got.length - file.tail.length),
          first_mismatch: firstBad < 0 ? null : { want: file.tail[firstBad], got: got[firstBad] },
          total_lines: r.total_lines,
        };
        keep.ours = id;
      } else {
        await closeWorkspaceOf(host.rpc, id);
      }
    }
    // tmux: new-window 'cat file' -> pane-died hook (tmux has read the PTY to
    // its end or lost it) -> one capture.
    {
      const t0 = performance.now();
      const id =
        (await tmux.must("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "base:", `cat '${file.path}'`))
          .trim();
      await tmuxWaitDead(tmux, [id]);
      const cap = await tmux.must("capture-pane", "-p", "-t", id);
      const ms = performance.now() - t0;
      tm.push(ms);
      tmuxLoss.push(tmuxTail(cap, file.marker));
      if (rep === 0) keep.tmux = id;
      else await tmux.cmd("kill-pane", "-t", id);
    }
    // raw node-pty drain, no terminal.
    {
      const r = await run(Deno.execPath(), [
        "run",
        "-A",
        "--quiet",
        `${ROOT}bench/drain.ts`,
        file.path,
        "200",
        "50",
      ], {
        cwd: ROOT,
      });
      if (r.code !== 0) throw new Error(`drain failed: ${r.stderr}`);
      const { bytes, ms } = JSON.parse(r.stdout);
      if (bytes !== file.ptyBytes) rawBytesOk = false;
      raw.push(ms);
    }
  }
  const best = (xs: number[]) => Math.min(...xs);
  const oursRate = mib / (best(ours) / 1000);
  const tmuxRate = mib / (best(tm) / 1000);
  const rawRate = mib / (best(raw) / 1000);
  const samples = {
    ours_ms: ours.map(Math.round),
    tmux_ms: tm.map(Math.round),
    raw_ms: raw.map(Math.round),
  };
  row({
    figure: `ingest ${Math.round(mib)} MiB mixed ANSI (best of ${o.reps})`,
    ours: `${f1(oursRate)} MiB/s`,
    peer: `tmux ${f1(tmuxRate)} MiB/s`,
    ratio: `${f2(oursRate / tmuxRate)}x`,
    target: ">= 1.0x tmux",
    pass: oursRate >= tmuxRate,
    data: { mib, ours_mib_s: oursRate, tmux_mib_s: tmuxRate, ...samples },
  });
  row({
    figure: "ingest vs raw node-pty drain (no terminal)",
    ours: `${f1(oursRate)} MiB/s`,
    peer: `raw ${f1(rawRate)} MiB/s`,
    ratio: `${f2(oursRate / rawRate)}x`,
    target: "(limit)",
    pass: null,
    data: { raw_mib_s: rawRate, raw_bytes_ok: rawBytesOk },
  });
  const lost = check.tail_mismatches as number;
  const tmuxLost = tmuxLoss.map((t) => (t.marker ? 0 : file.lines - t.lastLine));
  row({
    figure: `0 bytes lost: last ${file.tail.length} lines exact, marker after exit`,
    ours: lost === 0 ? `ok (${file.tail.length}/${file.tail.length})` : `${lost} lines differ`,
    peer: tmuxLost.every((n) => n === 0) ? "tmux ok" : `tmux lost last ${tmuxLost.join("/")} lines`,
    ratio: "-",
    target: "0 lost",
    pass: lost === 0,
    data: { ...check, tmux_lines_lost_at_exit: tmuxLost },
  });
  details.ingest = { file: { bytes: file.bytes, lines: file.lines, pty_bytes: file.ptyBytes }, ...samples };
}

/**
 * Flow control checked at the byte level: the same file through a bare pane
 * worker (no host), counting the bytes node-pty handed to xterm.
 */
async function benchLossless(file: Awaited<ReturnType<typeof writeAnsiFile>>) {
  const { PanePool } = await import("../src/core/pane/pool.ts");
  let exited: () => void = () => {};
  const done = new Promise<void>((r) => (exited = r));
  const pool = new PanePool(1);
  pool.listen((ev) => {
    if (ev.ev === "exit") exited();
  });
  try {
    const t0 = performance.now();
    await pool.spawn(
      {
        id: 1,
        file: "/bin/sh",
        args: ["-c", `cat '${file.path}'`],
        cwd: ROOT,
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", TERM: "xterm-256color", LANG: "C.UTF-8" },
        cols: 200,
        rows: 50,
        scrollback: 10_000,
      } as Parameters<typeof pool.spawn>[0],
    );
    await done;
    const ms = performance.now() - t0;
    const modes = await pool.modes(1);
    const r = await pool.read(1, 1, 0);
    const ok = modes.bytes_in === file.ptyBytes && r.lines[0] === file.marker;
    row({
      figure: "0 bytes lost: bytes PTY -> xterm (bare pane worker)",
      ours: `${modes.bytes_in}/${file.ptyBytes}`,
      peer: "-",
      ratio: "-",
      target: "all",
      pass: ok,
      data: {
        bytes_in: modes.bytes_in,
        bytes_expected: file.ptyBytes,
        ms,
        marker: r.lines[0] === file.marker,
      },
    });
    await pool.dispose(1);
  } finally {
    pool.terminate();
  }
}

// ---------------------------------------------------------------- 2. fan-out

async function benchFanout(
  o: ReturnType<typeof parseOpts>,
  host: Host,
  exits: ExitWatch,
  tmux: Tmux,
  file: Awaited<ReturnType<typeof writeAnsiFile>>,
) {
  const n = o.panes;
  const total = (n * file.bytes) / MiB;
  console.error(`fan-out: ${n} panes x ${f1(file.bytes / MiB)} MiB, ${o.reps} rep(s) each`);
  // A pane waits on its tty for a newline, then cats: all start together.
  const command = `read _; exec cat '${file.path}'`;

  // Ping round trips with an idle host, for reference.
  const idle = await pingWorker(host.socket);
  await new Promise((r) => setTimeout(r, 1000));
  const idleSamples = await idle.stop();

  const ours: number[] = [];
  const tm: number[] = [];
  const cpuLog: unknown[] = [];
  details.fanout_host_threads = cpuLog;
  let pings: number[] = [];
  let oursMarkers = 0;
  let tmuxMarkers = 0;
  for (let rep = 0; rep < o.reps; rep++) {
    {
      const ids = (await Promise.all(
        Array.from(
          { length: n },
          () => host.rpc.call("workspace.create", { command }),
        ),
      )).map((r) => r.surface_id);
      const pinger = await pingWorker(host.socket);
      const cpu0 = threadCpu(host.pid);
      const t0 = performance.now();
      await Promise.all(ids.map((id) => host.rpc.call("surface.send_text", { surface_id: id, text: "\n" })));
      await exits.all(ids);
      const ms = performance.now() - t0;
      const cpu = cpuDelta(cpu0, threadCpu(host.pid));
      console.error(
        `  host CPU during fan-out (ms by thread, ${Math.round(ms)} ms wall): ${JSON.stringify(cpu)}`,
      );
      cpuLog.push({ wall_ms: Math.round(ms), cpu_ms: cpu });
      const samples = await pinger.stop();
      ours.push(ms);
      if (rep === 0 || ms <= Math.min(...ours)) pings = samples;
      const lasts = await Promise.all(ids.map((id) => readPane(host.rpc, id, 1)));
      oursMarkers = lasts.filter((r) => r.text === file.marker).length;
      for (const id of ids) await closeWorkspaceOf(host.rpc, id);
    }
    {
      const create: string[] = [];
      for (let i = 0; i < n; i++) {
        if (i) create.push(";");
        create.push("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "base:", command);
      }
      const ids = (await tmux.must(...create)).trim().split("\n");
      const release: string[] = [];
      ids.forEach((id, i) => {
        if (i) release.push(";");
        release.push("send-keys", "-t", id, "Enter");
      });
      const t0 = performance.now();
      await tmux.must(...release);
      await tmuxWaitDead(tmux, ids);
      const ms = performance.now() - t0;
      tm.push(ms);
      let visible = 0;
      for (const id of ids) {
        if ((await tmux.must("capture-pane", "-p", "-t", id)).includes(file.marker)) visible++;
        await tmux.cmd("kill-pane", "-t", id);
      }
      tmuxMarkers = visible;
    }
  }
  const oursRate = total / (Math.min(...ours) / 1000);
  const tmuxRate = total / (Math.min(...tm) / 1000);
  row({
    figure: `fan-out ${n} panes x ${Math.round(file.bytes / MiB)} MiB aggregate (best of ${o.reps})`,
    ours: `${f1(oursRate)} MiB/s`,
    peer: `tmux ${f1(tmuxRate)} MiB/s`,
    ratio: `${f2(oursRate / tmuxRate)}x`,
    target: ">= 1.3x tmux",
    pass: oursRate >= 1.3 * tmuxRate,
    data: {
      ours_ms: ours.map(Math.round),
      tmux_ms: tm.map(Math.round),
      ours_mib_s: oursRate,
      tmux_mib_s: tmuxRate,
    },
  });
  row({
    figure: `fan-out: panes whose marker line is visible after exit`,
    ours: `${oursMarkers}/${n}`,
    peer: `tmux ${tmuxMarkers}/${n}`,
    ratio: "-",
    target: "all",
    pass: oursMarkers === n,
  });
  const p50 = median(pings);
  const p99 = quantile(pings, 0.99);
  row({
    figure: `system.ping during fan-out p50 / p99 (${pings.length} pings)`,
    ours: `${f2(p50)} / ${f2(p99)} ms`,
    peer: `idle ${f2(median(idleSamples))} / ${f2(quantile(idleSamples, 0.99))} ms`,
    ratio: `max ${f1(Math.max(...pings))} ms`,
    target: "p99 <= 5 ms",
    pass: p99 <= 5,
    data: { p50, p99, max: Math.max(...pings), count: pings.length, idle_p50: median(idleSamples) },
  });
}

// ---------------------------------------------------------------- 3. one-shot

/**
 * Deno flags the one-shot pair is also measured under. deno.json has
 * nodeModulesDir "auto": with npm packages anywhere in the static graph
 * (literal dynamic imports count), every start checks node_modules;
 * "manual" skips that check.
 */
const ONESHOT_FLAGS = [
  { key: "cached", flag: "--cached-only" },
  { key: "manual", flag: "--node-modules-dir=manual" },
] as const;

async function benchOneshot(
  o: ReturnType<typeof parseOpts>,
  host: Host,
  paneId: number,
  tmux: Tmux,
  tmuxPane: string,
) {
  console.error(`one-shot: ${o.runs} runs of each command`);
  const env = { ...host.env };
  delete env.PANEFLOW_CONFIG;
  const deno = Deno.execPath();
  // The CLI as `deno task install` runs it: bundled (scripts/build.ts), built now from this tree.
  await Deno.mkdir(`${ROOT}dist`, { recursive: true });
  const bundle = await Deno.makeTempDir({ dir: `${ROOT}dist`, prefix: "bench-cli-" });
  onCleanup(() => Deno.remove(bundle, { recursive: true }));
  await build(bundle);
  const ours = `${bundle}/main.js`;
  const cmds: Record<string, { cmd: string; args: string[] }> = {
    ours: { cmd: deno, args: ["run", "-A", ours, "read", String(paneId), "--raw"] },
    source: { cmd: deno, args: ["run", "-A", MAIN, "read", String(paneId), "--raw"] },
    bare: { cmd: deno, args: ["run", "-A", `${ROOT}bench/empty.ts`] },
    floor: { cmd: deno, args: ["run", "-A", `${ROOT}bench/oneshot_floor.js`, String(paneId)] },
    // The same pair under other Deno flags (see ONESHOT_FLAGS).
    ...Object.fromEntries(ONESHOT_FLAGS.flatMap(({ key, flag }) => [
      [`ours_${key}`, { cmd: deno, args: ["run", "-A", flag, ours, "read", String(paneId), "--raw"] }],
      [`bare_${key}`, { cmd: deno, args: ["run", "-A", flag, `${ROOT}bench/empty.ts`] }],
    ])),
    tmux: { cmd: "tmux", args: ["-L", tmux.label, "capture-pane", "-p", "-t", tmuxPane, "-S", "-150"] },
  };
  const times: Record<string, number[]> = {};
  const once = async (name: string) => {
    const { cmd, args } = cmds[name];
    const t0 = performance.now();
    const out = await new Deno.Command(cmd, {
      args,
      env,
      cwd: ROOT,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    })
      .output();
    const ms = performance.now() - t0;
    if (out.code !== 0 || (!name.startsWith("bare") && out.stdout.length < 100)) {
      throw new Error(`${name} failed (${out.code}): ${new TextDecoder().decode(out.stderr).slice(0, 300)}`);
    }
    return ms;
  };
  const names = Object.keys(cmds);
  for (const name of names) for (let i = 0; i < 2; i++) await once(name); // warm caches
  for (let i = 0; i < o.runs; i++) {
    // Rotate the order so drift in machine load hits every command alike.
    for (let j = 0; j < names.length; j++) {
      const name = names[(i + j) % names.length];
      (times[name] ??= []).push(await once(name));
    }
  }
  const m = Object.fromEntries(names.map((n) => [n, median(times[n])]));
  row({
    figure: `one-shot \`paneflow read\` (bundled CLI) vs bare \`deno run\` empty (median of ${o.runs})`,
    ours: `${f1(m.ours)} ms`,
    peer: `bare deno ${f1(m.bare)} ms`,
    ratio: `${f2(m.ours / m.bare)}x`,
    target: "<= 1.15x",
    pass: m.ours <= 1.15 * m.bare,
    data: { medians_ms: m, samples_ms: times },
  });
  row({
    figure: "  same, from source (`deno run -A main.ts`, not bundled)",
    ours: `${f1(m.source)} ms`,
    peer: `bare deno ${f1(m.bare)} ms`,
    ratio: `${f2(m.source / m.bare)}x`,
    target: "(info)",
    pass: null,
  });
  row({
    figure: "  floor: one-file client (connect, surface.read, print) vs bare",
    ours: `${f1(m.floor)} ms`,
    peer: `bare deno ${f1(m.bare)} ms`,
    ratio: `${f2(m.floor / m.bare)}x`,
    target: "(limit)",
    pass: null,
  });
  for (const { key, flag } of ONESHOT_FLAGS) {
    const ours = m[`ours_${key}`], bare = m[`bare_${key}`];
    row({
      figure: `  same, both with ${flag}`,
      ours: `${f1(ours)} ms`,
      peer: `bare deno ${f1(bare)} ms`,
      ratio: `${f2(ours / bare)}x`,
      target: "<= 1.15x",
      pass: ours <= 1.15 * bare,
    });
  }
  row({
    figure: "one-shot `paneflow read` vs `tmux capture-pane -p` (200 lines)",
    ours: `${f1(m.ours)} ms`,
    peer: `tmux ${f1(m.tmux)} ms`,
    ratio: `${f1(m.ours / m.tmux)}x`,
    target: "(info)",
    pass: null,
  });
}

// ---------------------------------------------------------------- 4. read

async function benchRead(
  o: ReturnType<typeof parseOpts>,
  host: Host,
  paneId: number,
  tmux: Tmux,
  tmuxPane: string,
) {
  console.error(`surface.read: ${o.readCalls} calls of 200 lines`);
  // Repeating one read of the idle pane is answered from the host's last read; cycling through
  // more offsets than the host keeps reads for makes every call go through the pane worker.
  const timeReads = async (offsets: number) => {
    const ms: number[] = [];
    for (let i = 0; i < 20 + o.readCalls; i++) {
      const t0 = performance.now();
      const r = await readPane(host.rpc, paneId, 200, i % offsets);
      if (i >= 20) ms.push(performance.now() - t0);
      if (r.lines !== 200) throw new Error(`surface.read gave ${r.lines} lines`);
    }
    return ms;
  };
  const ours = await timeReads(1);
  const fresh = await timeReads(8);
  const ctl = new TmuxControl(tmux, "base");
  await ctl.ready();
  const tm: number[] = [];
  for (let i = 0; i < 20 + o.readCalls; i++) {
    const t0 = performance.now();
    const out = await ctl.command(`capture-pane -p -t ${tmuxPane} -S -150`);
    const ms = performance.now() - t0;
    if (out.length < 150) throw new Error(`tmux capture gave ${out.length} lines`);
    if (i >= 20) tm.push(ms);
  }
  await ctl.close();
  row({
    figure: `surface.read 200 lines of an idle pane, persistent socket p50 / p99 (${o.readCalls} calls)`,
    ours: `${f2(median(ours))} / ${f2(quantile(ours, 0.99))} ms`,
    peer: `tmux -C ${f2(median(tm))} / ${f2(quantile(tm, 0.99))} ms`,
    ratio: `${f2(median(ours) / median(tm))}x`,
    target: "(info)",
    pass: null,
    data: {
      ours_p50: median(ours),
      ours_p99: quantile(ours, 0.99),
      tmux_p50: median(tm),
      tmux_p99: quantile(tm, 0.99),
    },
  });
  row({
    figure: "  the same, each read new to the host (through the pane worker)",
    ours: `${f2(median(fresh))} / ${f2(quantile(fresh, 0.99))} ms`,
    peer: `tmux -C ${f2(median(tm))} / ${f2(quantile(tm, 0.99))} ms`,
    ratio: `${f2(median(fresh) / median(tm))}x`,
    target: "(info)",
    pass: null,
    data: { ours_p50: median(fresh), ours_p99: quantile(fresh, 0.99) },
  });
}

// ---------------------------------------------------------------- 5. memory

async function benchMemory(o: ReturnType<typeof parseOpts>, dir: string) {
  const n = o.memPanes;
  console.error(`memory: 2 x ${n} panes x ${o.memLines} lines of 80 columns, history 10000, 80x24`);
  const path = `${dir}/plain.txt`;
  await writePlainFile(path, o.memLines, 80);
  const marker = String(o.memLines).padStart(6, "0");

  // ours: RSS with 0 panes, with n, with 2n (the second n gives the marginal cost,
  // free of the one-off growth of the workers' heaps and JIT code).
  const host = await startHost(dir, "mem", {
    terminal: { cols: 80, rows: 24, scrollback_lines: 10_000 },
    host: { idle_timeout_secs: 600, ...(o.workers ? { pane_workers: o.workers } : {}) },
  });
  const exits = await ExitWatch.open(host);
  const oursAdd = async () => {
    const ids: number[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(
        (await host.rpc.call("workspace.create", { command: `cat '${path}'` }))
          .surface_id,
      );
    }
    await exits.all(ids);
    const reads = await Promise.all(ids.map((id) => readPane(host.rpc, id, 1)));
    if (!reads.every((r) => r.text.startsWith(marker))) throw new Error("memory: ours lost the last line");
    return reads.map((r) => r.total_lines);
  };
  const base = await settledRss(host.pid);
  const totals = await oursAdd();
  const full = await settledRss(host.pid);
  await oursAdd();
  const full2 = await settledRss(host.pid);
  await host.stop();

  const tmux = await Tmux.start(dir, `pfbench-${Deno.pid}-mem`, tmuxConf("80x24"), "80x24");
  const tpid = await tmux.pid();
  const tmuxAdd = async () => {
    const create: string[] = [];
    for (let i = 0; i < n; i++) {
      if (i) create.push(";");
      create.push("new-window", "-d", "-P", "-F", "#{pane_id}", "-t", "base:", `cat '${path}'`);
    }
    const tids = (await tmux.must(...create)).trim().split("\n");
    await tmuxWaitDead(tmux, tids);
    return (await tmux.must("list-panes", "-a", "-F", "#{pane_id} #{history_size}")).trim().split("\n")
      .filter((l) => tids.includes(l.split(" ")[0])).map((l) => Number(l.split(" ")[1]));
  };
  const tbase = await settledRss(tpid);
  const hist = await tmuxAdd();
  const tfull = await settledRss(tpid);
  await tmuxAdd();
  const tfull2 = await settledRss(tpid);
  await tmux.kill();

  const mib = (b: number) => `${f1(b / 1024 / 1024)} MiB`;
  const oursPer = (full - base) / n;
  const tmuxPer = (tfull - tbase) / n;
  const oursMarginal = (full2 - full) / n;
  const tmuxMarginal = (tfull2 - tfull) / n;
  row({
    figure: `memory per pane, 10k lines history, 80x24 (RSS delta / ${n})`,
    ours: mib(oursPer),
    peer: `tmux ${mib(tmuxPer)}`,
    ratio: `${f2(oursPer / tmuxPer)}x`,
    target: "<= 2x tmux",
    pass: oursPer <= 2 * tmuxPer,
    data: {
      ours_base: base,
      ours_full: full,
      ours_total_lines: totals,
      tmux_base: tbase,
      tmux_full: tfull,
      tmux_history: hist,
    },
  });
  row({
    figure: `  marginal: panes ${n + 1}..${2 * n} (RSS delta / ${n})`,
    ours: mib(oursMarginal),
    peer: `tmux ${mib(tmuxMarginal)}`,
    ratio: `${f2(oursMarginal / tmuxMarginal)}x`,
    target: "(info)",
    pass: null,
    data: { ours_full2: full2, tmux_full2: tfull2 },
  });
}

// ---------------------------------------------------------------- main

async function main(): Promise<number> {
  const o = parseOpts(Deno.args);
  const started = performance.now();
  const dir = await Deno.makeTempDir({ prefix: "pfbench-" });
  onCleanup(() => Deno.remove(dir, { recursive: true }).catch(() => {}));
  const stop = async () => {
    console.error("\ninterrupted; cleaning up");
    await cleanupAll();
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);

  const needA = ["ingest", "fanout", "oneshot", "read"].some((p) => o.only.has(p as Part));
  let failure: string | null = null;
  try {
    let keep: { ours?: number; tmux?: string } = {};
    if (needA) {
      console.error("generating files ...");
      const big = await writeAnsiFile(`${dir}/ingest.ans`, o.ingestMib * MiB, { seed: 1, tag: "ingest" });
      const small = await writeAnsiFile(`${dir}/fanout.ans`, o.fanoutMib * MiB, { seed: 2, tag: "fanout" });
      const host = await startHost(dir, "main", {
        host: { idle_timeout_secs: 600, ...(o.workers ? { pane_workers: o.workers } : {}) },
      });
      const exits = await ExitWatch.open(host);
      const tmux = await Tmux.start(dir, `pfbench-${Deno.pid}`, tmuxConf("200x50"), "200x50");
      if (o.only.has("ingest")) {
        await benchIngest(o, host, exits, tmux, big, keep);
        await benchLossless(big);
      }
      if (o.only.has("fanout")) await benchFanout(o, host, exits, tmux, small);
      if (o.only.has("oneshot") || o.only.has("read")) {
        if (keep.ours === undefined) {
          // Something to read: a pane with the small file in both.
          keep = {};
          const id = (await host.rpc.call("workspace.create", {
            command: `cat '${small.path}'`,
          }))
            .surface_id;
          await exits.all([id]);
          keep.ours = id;
          keep.tmux = (await tmux.must(
            "new-window",
            "-d",
            "-P",
            "-F",
            "#{pane_id}",
            "-t",
            "base:",
            `cat '${small.path}'`,
          ))
            .trim();
          await tmuxWaitDead(tmux, [keep.tmux]);
        }
        if (o.only.has("oneshot")) await benchOneshot(o, host, keep.ours!, tmux, keep.tmux!);
        if (o.only.has("read")) await benchRead(o, host, keep.ours!, tmux, keep.tmux!);
      }
      details.host_rss_end = rss(host.pid);
      await host.stop();
      await tmux.kill();
    }
    if (o.only.has("memory")) await benchMemory(o, dir);
    if (o.only.has("events")) {
      // Event latency and wait --pattern vs a tmux polling loop: its own table (bench/events.ts).
      await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", `${ROOT}bench/events.ts`],
        stdout: "inherit",
        stderr: "inherit",
      }).output();
    }
  } catch (e) {
    // Keep what was measured; the table and the JSON say where it stopped.
    failure = e instanceof Error ? e.stack ?? e.message : String(e);
    console.error(`bench failed: ${failure}`);
  } finally {
    await cleanupAll();
  }
  const seconds = (performance.now() - started) / 1000;
  console.log("");
  printTable();
  if (failure) console.log(`\nINCOMPLETE: ${failure.split("\n")[0]}`);
  const load = await Deno.readTextFile("/proc/loadavg").catch(() => "");
  console.log(
    `\n${navigator.hardwareConcurrency} cpus, load ${load.split(" ").slice(0, 3).join(" ")}, ${
      f1(seconds)
    } s`,
  );
  await Deno.mkdir(`${ROOT}bench/out`, { recursive: true });
  const out = {
    date: new Date().toISOString(),
    seconds,
    cpus: navigator.hardwareConcurrency,
    loadavg: load.trim(),
    deno: Deno.version.deno,
    tmux: (await run("tmux", ["-V"])).stdout.trim(),
    options: { ...o, only: [...o.only] },
    rows,
    details,
    failure,
  };
  await Deno.writeTextFile(`${ROOT}bench/out/latest.json`, JSON.stringify(out, null, 2) + "\n");
  console.log(`wrote bench/out/latest.json`);
  return failure ? 1 : 0;
}

if (import.meta.main) {
  try {
    Deno.exit(await main());
  } catch (e) {
    console.error(`bench failed: ${e instanceof Error ? e.stack ?? e.message : e}`);
    await cleanupAll();
    Deno.exit(1);
  }
}
