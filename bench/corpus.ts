/**
 * The workload corpus (./workloads.ts) through paneflow and tmux 3.3a, paired
 * in one run at the same pane size (200x50, 10,000 lines of history):
 *
 * - ingest: one pane `cat`s a big file of the workload;
 * - fan-out: `--panes` panes `cat` a file at once (released together);
 *   during ours, `system.ping` every 10 ms (./pinger.ts) and output →
 *   `surface_changed` on one more pane (./prober.ts) are measured;
 * - memory per pane: RSS growth of the host / tmux server with the fan-out's
 *   panes full, divided by their count.
 *
 * Each side ends when its end marker is on the pane's screen (paneflow:
 * `surface.read`; tmux: `capture-pane` over a control-mode client attached
 * to another session), polled every `--poll-ms`. The panes keep running
 * (`cat file; exec sleep`): tmux 3.3a drops the tail of a pane whose
 * program exits right after a flood. Reps alternate which side goes first.
 * Bytes lost: the marker must show on every pane of both sides.
 *
 *   deno run -A bench/corpus.ts [--workloads log,build,cjk,claude] [--parts ingest,fanout]
 *     [--ingest-mib 100] [--fanout-mib 20] [--panes 20] [--reps 3] [--poll-ms 50]
 *     [--workers N] [--watch-after] [--engine xterm|ghostty]
 *
 * `--engine` is the panes' terminal engine (docs/engines.md; default xterm):
 * a run per engine, each paired with tmux, compares them.
 *
 * The latency probes' client watches its pane from before the last rep's
 * floods open their panes; `--watch-after` starts it once they are open.
 *
 * Prints a table per workload and writes bench/out/corpus.json.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Workload, type WorkloadFile, WORKLOADS, writeWorkload } from "./workloads.ts";
import { cleanupAll, type Host, onCleanup, ROOT, settledRss, startHost, Tmux, TmuxControl } from "./procs.ts";
import { RpcConn } from "../tests/_stream.ts";

const MiB = 1024 * 1024;
const SIZE = { cols: 200, rows: 50 };
const HISTORY = 10_000;

const { values: argv } = parseArgs({
  args: Deno.args,
  options: {
    workloads: { type: "string", default: WORKLOADS.join(",") },
    parts: { type: "string", default: "ingest,fanout" },
    "ingest-mib": { type: "string", default: "100" },
    "fanout-mib": { type: "string", default: "20" },
    panes: { type: "string", default: "20" },
    reps: { type: "string", default: "3" },
    "poll-ms": { type: "string", default: "50" },
    workers: { type: "string", default: "0" },
    "watch-after": { type: "boolean", default: false },
    engine: { type: "string", default: "xterm" },
  },
});
const o = {
  workloads: argv.workloads!.split(",") as Workload[],
  parts: new Set(argv.parts!.split(",")),
  ingestMib: Number(argv["ingest-mib"]),
  fanoutMib: Number(argv["fanout-mib"]),
  panes: Number(argv.panes),
  reps: Number(argv.reps),
  pollMs: Number(argv["poll-ms"]),
  workers: Number(argv.workers),
  watchAfter: argv["watch-after"],
  engine: argv.engine!,
};
for (const w of o.workloads) if (!WORKLOADS.includes(w)) throw new Error(`unknown workload ${w}`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const f1 = (n: number) => n.toFixed(1);
const f2 = (n: number) => n.toFixed(2);
function quantile(xs: number[], q: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}
const median = (xs: number[]) => quantile(xs, 0.5);

/**
 * Polls `done` for every key until each holds; resolves with the time the
 * last first held. A key that never holds counts the whole timeout (the
 * caller counts its marker missing) rather than losing the run.
 */
async function pollAll<K>(keys: K[], done: (k: K) => Promise<boolean>, t0: number, timeoutMs = 300_000) {
  const at = new Map<K, number>();
  await Promise.all(keys.map(async (k) => {
    while (true) {
      if (await done(k)) {
        at.set(k, performance.now() - t0);
        return;
      }
      if (performance.now() - t0 > timeoutMs) {
        console.error(`  timed out waiting for the marker of ${k}`);
        at.set(k, timeoutMs);
        return;
      }
      await sleep(o.pollMs);
    }
  }));
  return Math.max(...at.values());
}

/** A helper Worker (./pinger.ts or ./prober.ts) that measures until stopped. */
async function probe(file: string, start: Record<string, unknown>) {
  const w = new Worker(new URL(file, import.meta.url).href, { type: "module" });
  onCleanup(() => w.terminate());
  type Msg = { started?: boolean; samples?: number[]; failure?: string };
  let result: Msg | null = null;
  let onMsg: (d: Msg) => void = () => {};
  w.onmessage = (e) => {
    if (e.data.samples) result = e.data;
    onMsg(e.data);
  };
  await new Promise<void>((resolve) => {
    onMsg = (d) => d.started && resolve();
    w.postMessage(start);
  });
  const done = (d: Msg) => {
    w.terminate();
    if (d.failure) console.error(`  ${file}: stopped early: ${d.failure.split("\n")[0]}`);
    return d.samples!;
  };
  return {
    stop: () =>
      new Promise<number[]>((resolve) => {
        if (result) return resolve(done(result));
        onMsg = (d) => d.samples && resolve(done(d));
        w.postMessage("stop");
      }),
  };
}

interface Side {
  ms: number[];
  /** RSS growth per pane with the fan-out's panes full (bytes). */
  perPane?: number;
  markersMissing: number;
}

class Ours {
  private constructor(readonly host: Host, readonly rpc: RpcConn) {}
  static async start(dir: string, name: string) {
    const host = await startHost(dir, `pf-${name}`, {
      terminal: { ...SIZE, scrollback_lines: HISTORY, engine: o.engine },
      host: { idle_timeout_secs: 900, ...(o.workers ? { pane_workers: o.workers } : {}) },
    });
    return new Ours(host, await RpcConn.open(host.socket));
  }
  async create(command: string): Promise<number> {
    return (await this.rpc.call("workspace.create", { command })).surface_id;
  }
  async shows(id: number, marker: string): Promise<boolean> {
    const r = await this.rpc.call("surface.read", {
      surface_id: id,
      lines: 3, // the newest lines: the marker is the last line printed
      fenced: false,
    });
    return r.text.includes(marker);
  }
  async close(ids: number[]) {
    for (const id of ids) await this.rpc.call("surface.close", { surface_id: id }).catch(() => {});
  }
}

class TmuxSide {
  private constructor(readonly tmux: Tmux, readonly ctl: TmuxControl) {}
  static async start(dir: string, name: string) {
    const conf = [
      `set -g history-limit ${HISTORY}`,
      `set -g default-size ${SIZE.cols}x${SIZE.rows}`,
      "set -g status off",
    ];
    const tmux = await Tmux.start(dir, `pfcorpus-${Deno.pid}-${name}`, conf, `${SIZE.cols}x${SIZE.rows}`);
    // The poller attaches to a session of its own: the bench's windows have no client.
    await tmux.must("new-session", "-d", "-s", "ctl", "-x", "80", "-y", "24", "cat");
    const ctl = new TmuxControl(tmux, "ctl");
    await ctl.ready();
    return new TmuxSide(tmux, ctl);
  }
  async create(command: string, n: number): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      out.push(
        (await this.ctl.command(
          `new-window -d -P -F '#{pane_id}' -t base: "${command.replaceAll('"', '\\"')}"`,
        ))[0],
      );
    }
    return out;
  }
  #queue: Promise<unknown> = Promise.resolve();
  /** One command at a time: the control client's answers come in order, on one stream. */
  command(cmd: string): Promise<string[]> {
    const next = this.#queue.then(() => this.ctl.command(cmd));
    this.#queue = next.catch(() => {});
    return next;
  }
  async shows(id: string, marker: string): Promise<boolean> {
    return (await this.command(`capture-pane -p -t ${id}`)).some((l) => l.includes(marker));
  }
  async close(ids: string[]) {
    for (const id of ids) await this.command(`kill-pane -t ${id}`).catch(() => {});
  }
}

interface Result {
  workload: Workload;
  part: "ingest" | "fanout";
  mib: number;
  ours: Side;
  tmux: Side;
  ping?: number[];
  frame?: number[];
  /** Our time in the rep with the latency probes running (not in `ours.ms`). */
  probedMs?: number;
  cpu?: Record<string, number>;
}

/** CPU time (ms) of each thread of a process, summed by thread name. */
function threadCpu(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      const stat = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/stat`);
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out[name] = (out[name] ?? 0) + (Number(f[11]) + Number(f[12])) * 10;
    }
  } catch { /* gone */ }
  return out;
}

async function runPart(
  part: "ingest" | "fanout",
  file: WorkloadFile,
  ours: Ours,
  tm: TmuxSide,
  stampId: number | null,
): Promise<Result> {
  const n = part === "ingest" ? 1 : o.panes;
  // Every pane waits on its terminal for a newline, so all start together.
  const command = `read _; cat '${file.path}'; exec sleep 3600`;
  const res: Result = {
    workload: file.name,
    part,
    mib: (n * file.bytes) / MiB,
    ours: { ms: [], markersMissing: 0 },
    tmux: { ms: [], markersMissing: 0 },
  };
  for (let rep = 0; rep < o.reps; rep++) {
    const order = rep % 2 === 0 ? ["ours", "tmux"] : ["tmux", "ours"];
    for (const side of order) {
      if (side === "ours") {
        const base = await settledRss(ours.host.pid, { quietMs: 300 });
        // The latency probes run in the last rep only; throughput is the median of the others.
        const measure = part === "fanout" && stampId !== null && rep === o.reps - 1;
        const probes = async () =>
          measure
            ? [
              await probe("./pinger.ts", { socket: ours.host.socket, intervalMs: 10 }),
              await probe("./prober.ts", { socket: ours.host.socket, surfaceId: stampId }),
            ]
            : [null, null];
        // The probe watches its pane before the floods' panes open, or (--watch-after) once they have.
        let [pinger, prober] = o.watchAfter ? [null, null] : await probes();
        const ids: number[] = [];
        for (let i = 0; i < n; i++) ids.push(await ours.create(command));
        if (o.watchAfter) [pinger, prober] = await probes();
        const cpu0 = threadCpu(ours.host.pid);
        const t0 = performance.now();
        await Promise.all(
          ids.map((id) => ours.rpc.call("surface.send_text", { surface_id: id, text: "\n" })),
        );
        const ms = await pollAll(ids, (id) => ours.shows(id, file.marker), t0);
        const cpu1 = threadCpu(ours.host.pid);
        if (measure && o.reps > 1) res.probedMs = ms;
        else res.ours.ms.push(ms);
        if (pinger) (res.ping ??= []).push(...await pinger.stop());
        if (prober) (res.frame ??= []).push(...await prober.stop());
        if (rep === 0) {
          res.cpu = Object.fromEntries(Object.entries(cpu1).map(([k, v]) => [k, v - (cpu0[k] ?? 0)]));
          res.ours.perPane = (await settledRss(ours.host.pid, { quietMs: 300 }) - base) / n;
        }
        for (const id of ids) if (!await ours.shows(id, file.marker)) res.ours.markersMissing++;
        await ours.close(ids);
      } else {
        const pid = await tm.tmux.pid();
        const base = await settledRss(pid, { quietMs: 300 });
        const ids = await tm.create(command, n);
        const t0 = performance.now();
        for (const id of ids) await tm.command(`send-keys -t ${id} Enter`);
        const ms = await pollAll(ids, (id) => tm.shows(id, file.marker), t0);
        res.tmux.ms.push(ms);
        if (rep === 0) res.tmux.perPane = (await settledRss(pid, { quietMs: 300 }) - base) / n;
        for (const id of ids) if (!await tm.shows(id, file.marker)) res.tmux.markersMissing++;
        await tm.close(ids);
      }
    }
    console.error(
      `  ${file.name} ${part} rep ${rep + 1}: ours ${
        Math.round(rep === o.reps - 1 && res.probedMs ? res.probedMs : res.ours.ms.at(-1)!)
      } ms, tmux ${Math.round(res.tmux.ms.at(-1)!)} ms`,
    );
  }
  return res;
}

function report(results: Result[]) {
  const rows: string[][] = [[
    "workload",
    "figure",
    `paneflow (${o.engine})`,
    "tmux 3.3a",
    "ratio",
    "target",
  ]];
  for (const r of results) {
    const ours = r.mib / (median(r.ours.ms) / 1000);
    const tmux = r.mib / (median(r.tmux.ms) / 1000);
    const need = r.part === "ingest" ? 1.1 : 1.3;
    rows.push([
      r.workload,
      `${r.part} ${r.part === "ingest" ? "1 pane" : `${o.panes} panes`}, ${
        Math.round(r.mib)
      } MiB (median of ${o.reps})`,
      `${f1(ours)} MiB/s`,
      `${f1(tmux)} MiB/s`,
      `${f2(ours / tmux)}x`,
      `>= ${need}x ${ours / tmux >= need ? "PASS" : "FAIL"}`,
    ]);
    if (r.part === "fanout") {
      if (r.ping) {
        const p99 = quantile(r.ping, 0.99);
        if (r.probedMs) {
          const probed = r.mib / (r.probedMs / 1000);
          rows.push([
            r.workload,
            `  the same with the latency probes below running (1 rep)`,
            `${f1(probed)} MiB/s`,
            "",
            `${f2(probed / tmux)}x`,
            "",
          ]);
        }
        rows.push([
          r.workload,
          `  system.ping p50 / p99 (${r.ping.length})`,
          `${f2(median(r.ping))} / ${f2(p99)} ms`,
          "",
          "",
          `p99 <= 5 ms ${p99 <= 5 ? "PASS" : "FAIL"}`,
        ]);
      }
      if (r.frame) {
        const p99 = quantile(r.frame, 0.99);
        rows.push([
          r.workload,
          `  output -> surface_changed p50 / p99 (${r.frame.length})`,
          `${f2(median(r.frame))} / ${f2(p99)} ms`,
          "",
          "",
          `p99 <= 20 ms ${p99 <= 20 ? "PASS" : "FAIL"}`,
        ]);
      }
      const mem = r.ours.perPane! / r.tmux.perPane!;
      rows.push([
        r.workload,
        `  memory per pane (RSS growth / ${o.panes})`,
        `${f1(r.ours.perPane! / MiB)} MiB`,
        `${f1(r.tmux.perPane! / MiB)} MiB`,
        `${f2(mem)}x`,
        `<= 1x ${mem <= 1 ? "PASS" : "FAIL"}`,
      ]);
    }
    rows.push([
      r.workload,
      `  panes missing the end marker`,
      String(r.ours.markersMissing),
      String(r.tmux.markersMissing),
      "",
      `0 ${r.ours.markersMissing === 0 ? "PASS" : "FAIL"}`,
    ]);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join(" | ").trimEnd());
}

async function main() {
  const dir = await Deno.makeTempDir({ prefix: "pfcorpus-" });
  onCleanup(() => Deno.remove(dir, { recursive: true }).catch(() => {}));
  Deno.addSignalListener("SIGINT", async () => {
    await cleanupAll();
    Deno.exit(130);
  });
  const started = performance.now();
  const results: Result[] = [];
  try {
    for (const w of o.workloads) {
      // Fresh servers per workload: neither gives freed heap back, so a second workload's
      // panes would reuse the first's memory and show no growth.
      const ours = await Ours.start(dir, w);
      const tm = await TmuxSide.start(dir, w);
      let stampId: number | null = null;
      if (o.parts.has("fanout")) {
        const stamp =
          `stty -echo; exec '${Deno.execPath()}' run --quiet --no-config '${ROOT}bench/_stamp.ts'`;
        stampId = await ours.create(stamp);
        await sleep(1500); // deno starts
      }
      // The fan-out first: its memory per pane is the growth of fresh servers (after the ingest,
      // tmux's panes reused the memory its ingest pane had freed, and it grew by nothing).
      for (const part of ["fanout", "ingest"] as const) {
        if (!o.parts.has(part)) continue;
        const mib = part === "ingest" ? o.ingestMib : o.fanoutMib;
        console.error(`${w} ${part}: writing ${mib} MiB ...`);
        const file = await writeWorkload(w, `${dir}/${w}-${part}`, mib * MiB, part === "ingest" ? 1 : 2);
        results.push(await runPart(part, file, ours, tm, stampId));
        await Deno.remove(file.path);
      }
      await ours.host.stop();
      await tm.ctl.close();
      await tm.tmux.kill();
    }
  } finally {
    await cleanupAll();
  }
  const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  console.log(
    `\n${new Date().toISOString()}, ${navigator.hardwareConcurrency} cpus, load ${load}, ${
      f1((performance.now() - started) / 1000)
    } s`,
  );
  report(results);
  await Deno.mkdir(`${ROOT}bench/out`, { recursive: true });
  await Deno.writeTextFile(
    `${ROOT}bench/out/corpus.json`,
    JSON.stringify({ date: new Date().toISOString(), load, options: o, results }, null, 1) + "\n",
  );
}

if (import.meta.main) await main();
