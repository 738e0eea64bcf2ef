/**
 * A pane's terminal without its PTY: each workload (./workloads.ts) parsed
 * in-process through the worker's own terminal (src/core/pane/terminal.ts:
 * xterm with the compact scrollback), "\n" sent as "\r\n" and in 4 KiB
 * chunks as a PTY delivers them, at 200x50 with 10,000 lines of history. Prints the process's CPU ms
 * per MiB (best of `--reps`), so a change to the parse path is measured without
 * the PTY, the scheduler or the other processes on the machine. With
 * `--xterm-only` it times xterm alone with 100 rows of scrollback and no
 * compact scrollback (rows that leave it are dropped): the floor our
 * compaction adds to.
 *
 *   deno run -A bench/parse_only.ts [--workloads log,build,cjk,claude] [--engines xterm,ghostty] [--mib 16]
 *                                   [--reps 5] [--chunk 4096] [--terminals 1] [--xterm-only] [--jump] [--profile top]
 *
 * `--engines` is a dimension: each workload is timed on each engine
 * (src/core/pane/engine.ts; default xterm), in turn.
 *
 * `--terminals N` parses the workload into N terminals at once, a chunk of
 * each in turn, as a worker with N floods does: their rows no longer all fit
 * in the core's caches (the figure is per MiB of all N).
 *
 * `--jump` parses each chunk through the worker's jump scroll (src/core/pane/fast_forward.ts),
 * as a pane's held batch of a flood is (`--chunk 131072`).
 *
 * `--profile N` runs V8's sampling profiler over the reps and prints the N
 * functions with the most self time per workload (see ./_cpuprofile.ts).
 *
 * @module
 */
import { parseArgs } from "node:util";
import process from "node:process";
import { type Workload, WORKLOADS, writeWorkload } from "./workloads.ts";
import xterm from "@xterm/headless";
import { STAGING_ROWS } from "../src/core/pane/scrollback.ts";
import { createEngine, prepareEngine } from "../src/core/pane/engines.ts";
import { ENGINE_KINDS, type EngineKind } from "../src/spec/engines.ts";
import { HOST_V8_FLAGS } from "../src/paths.ts";
import { Session } from "node:inspector";
import { type Profile, summarize } from "./_cpuprofile.ts";

const { values: argv } = parseArgs({
  args: Deno.args,
  options: {
    workloads: { type: "string", default: WORKLOADS.join(",") },
    engines: { type: "string", default: "xterm" },
    mib: { type: "string", default: "16" },
    reps: { type: "string", default: "5" },
    chunk: { type: "string", default: "4096" },
    terminals: { type: "string", default: "1" },
    "xterm-only": { type: "boolean", default: false },
    jump: { type: "boolean", default: false },
    profile: { type: "string" },
    child: { type: "boolean", default: false },
  },
});
const MiB = 1024 * 1024;

const session = new Session();
const prof = <T>(method: string, params: Record<string, unknown> = {}) =>
  new Promise<T>((resolve, reject) =>
    session.post(method, params, (err: Error | null, res?: object) => (err ? reject(err) : resolve(res as T)))
  );

/** CPU ms to parse `data` into each of `n` terminals of `engine`, a chunk of each in turn (as a worker with `n` floods). */
function run(data: Uint8Array, chunk: number, n: number, engine: EngineKind): number {
  const ts = Array.from(
    { length: n },
    () =>
      argv["xterm-only"] ? xtermOnly() : createEngine(engine, { cols: 200, rows: 50, scrollback: 10_000 }),
  );
  const parse = ts.map((t) => {
    const jump = argv.jump ? t.jump : null;
    return jump ? (d: Uint8Array) => jump.parse(d) : t.parseNow!;
  });
  const c0 = process.cpuUsage();
  for (let i = 0; i < data.length; i += chunk) {
    for (const [k, t] of ts.entries()) {
      parse[k](data.subarray(i, i + chunk));
      t.afterParse();
    }
  }
  const c = process.cpuUsage(c0);
  const ms = (c.user + c.system) / 1000;
  for (const t of ts) t.dispose();
  return ms;
}

/** "\n" as "\r\n", as a PTY's line discipline (ONLCR) hands the file to the terminal. */
function onlcr(raw: Uint8Array): Uint8Array {
  let lf = 0;
  for (const b of raw) if (b === 10) lf++;
  const out = new Uint8Array(raw.length + lf);
  let j = 0;
  for (const b of raw) {
    if (b === 10) out[j++] = 13;
    out[j++] = b;
  }
  return out;
}

function xtermOnly() {
  const term = new xterm.Terminal({ cols: 200, rows: 50, scrollback: STAGING_ROWS, logLevel: "off" });
  // deno-lint-ignore no-explicit-any
  const wb = (term as any)._core._writeBuffer;
  return {
    jump: null,
    parseNow: (d: Uint8Array) => wb.writeSync(d),
    afterParse: () => {},
    dispose: () => term.dispose(),
  };
}

if (import.meta.main) {
  if (!argv.child) {
    const args = ["run", "-A", "--quiet", `--v8-flags=${HOST_V8_FLAGS}`, import.meta.filename!, "--child"];
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: [...args, ...Deno.args],
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    Deno.exit(code);
  }
  if (argv.profile) {
    session.connect();
    await prof("Profiler.enable");
    await prof("Profiler.setSamplingInterval", { interval: 200 });
  }
  const dir = await Deno.makeTempDir({ prefix: "pfparse-" });
  const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  console.log(`# parse only, ${new Date().toISOString()}, load ${load}`);
  try {
    const engines = argv.engines!.split(",") as EngineKind[];
    for (const e of engines) {
      if (!ENGINE_KINDS.includes(e)) throw new Error(`Unknown engine "${e}" (${ENGINE_KINDS.join(", ")})`);
      await prepareEngine(e);
    }
    for (const w of argv.workloads!.split(",") as Workload[]) {
      const f = await writeWorkload(w, `${dir}/${w}`, Number(argv.mib) * MiB, 3);
      const data = onlcr(await Deno.readFile(f.path));
      for (const engine of engines) {
        const times: number[] = [];
        if (argv.profile) await prof("Profiler.start");
        const n = Number(argv.terminals);
        for (let r = 0; r < Number(argv.reps); r++) times.push(run(data, Number(argv.chunk), n, engine));
        const profile = argv.profile ? (await prof<{ profile: Profile }>("Profiler.stop")).profile : null;
        const best = Math.min(...times);
        const mib = n * data.length / MiB;
        console.log(
          `${w.padEnd(7)} ${engine.padEnd(8)} ${(best / mib).toFixed(1).padStart(6)} ms/MiB (${
            (mib / best * 1000).toFixed(1)
          } MiB/s), ` +
            `reps ${times.map((t) => (t / mib).toFixed(1)).join(" ")}`,
        );
        if (profile) {
          const { cats, fns, total } = summarize(profile);
          const pct = (ms: number) => `${((100 * ms) / total).toFixed(1)}%`.padStart(8);
          for (const [c, ms] of [...cats].filter(([c]) => c !== "idle").sort((a, b) => b[1] - a[1])) {
            console.log(`${pct(ms)}  ${c}`);
          }
          for (const [f, ms] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, Number(argv.profile))) {
            console.log(`${pct(ms)}  ${f}`);
          }
        }
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
