/**
 * Where a pane worker's time goes, per workload (./workloads.ts): one
 * worker (./profiled_worker.ts, V8's sampling profiler) runs `cat` of the
 * workload in one pane (ingest) and in `--panes` panes at once (fan-out) at
 * 200x50 with 10,000 lines of history, until every pane has exited. Prints
 * self time by category (xterm's parser and buffer, our scrollback
 * compaction, change detection and snapshots, the worker's own code and
 * message passing, node-pty's reads, GC, idle) and the top functions, and
 * writes each profile to bench/out/prof-<label>-<workload>-<part>.cpuprofile
 * (open it in Chrome DevTools).
 *
 *   deno run -A bench/profile.ts [--label before] [--workloads log,build,cjk,claude]
 *                                [--ingest-mib 20] [--fanout-mib 4] [--panes 10] [--top 12]
 *                                [--poll-ms 50]
 *
 * `--poll-ms N` reads the newest 3 lines of every pane every N ms while
 * they run, as bench/corpus.ts's poller (and a script waiting for output)
 * does; 0 reads nothing.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { type Workload, WORKLOADS, writeWorkload } from "./workloads.ts";
import { HOST_V8_FLAGS } from "../src/paths.ts";
import { type Profile, summarize } from "./_cpuprofile.ts";

const { values: argv } = parseArgs({
  args: Deno.args,
  options: {
    label: { type: "string", default: "now" },
    workloads: { type: "string", default: WORKLOADS.join(",") },
    "ingest-mib": { type: "string", default: "20" },
    "fanout-mib": { type: "string", default: "4" },
    panes: { type: "string", default: "10" },
    top: { type: "string", default: "12" },
    "poll-ms": { type: "string", default: "0" },
    watched: { type: "boolean", default: false },
    child: { type: "boolean", default: false },
  },
});
const ROOT = new URL("../", import.meta.url).pathname;
const MiB = 1024 * 1024;

async function profileOne(workload: Workload, part: "ingest" | "fanout", dir: string) {
  const n = part === "ingest" ? 1 : Number(argv.panes);
  const mib = part === "ingest" ? Number(argv["ingest-mib"]) : Number(argv["fanout-mib"]);
  const file = await writeWorkload(workload, `${dir}/${workload}-${part}`, mib * MiB, 3);
  const w = new Worker(new URL("./profiled_worker.ts", import.meta.url).href, { type: "module" });
  const exited = new Set<number>();
  const counts: Record<string, number> = {};
  let onMsg: (d: Record<string, unknown>) => void = () => {};
  w.onmessage = (e) => {
    for (const m of Array.isArray(e.data) ? e.data : [e.data]) {
      if (m?.ev === "exit") exited.add(m.id);
      if (m?.ev) counts[m.ev] = (counts[m.ev] ?? 0) + 1;
    }
    if (Array.isArray(e.data)) counts.batches = (counts.batches ?? 0) + 1;
    onMsg(e.data);
  };
  const next = (pred: (d: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => (onMsg = (d) => pred(d) && resolve(d)));
  const loaded = next((d) => d.loaded === true);
  await loaded;
  if (argv.watched) {
    // As the pool tells a worker one of its panes is watched (src/core/pane/pool.ts).
    const mixed = new Int32Array(new SharedArrayBuffer(4));
    mixed[0] = 1;
    w.postMessage({ watched: true, requests: new SharedArrayBuffer(4), mixedWatched: mixed.buffer });
  }
  const started = next((d) => d.started === true);
  w.postMessage("profile-start");
  await started;
  const t0 = performance.now();
  for (let i = 1; i <= n; i++) {
    w.postMessage({
      rid: i,
      op: "spawn",
      id: i,
      file: "/bin/sh",
      args: ["-c", `cat '${file.path}'`],
      cwd: ROOT,
      env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", TERM: "xterm-256color", LANG: "C.UTF-8" },
      cols: 200,
      rows: 50,
      scrollback: 10_000,
    });
  }
  const pollMs = Number(argv["poll-ms"]);
  let rid = 1000;
  const poller = pollMs > 0
    ? setInterval(() => {
      for (let i = 1; i <= n; i++) {
        if (!exited.has(i)) w.postMessage({ rid: ++rid, op: "read", id: i, lines: 3, offset: 0 });
      }
    }, pollMs)
    : null;
  while (exited.size < n) await new Promise((r) => setTimeout(r, 5));
  if (poller !== null) clearInterval(poller);
  const wall = performance.now() - t0;
  console.log("messages", JSON.stringify(counts));
  const stopped = next((d) => "profile" in d);
  w.postMessage("profile-stop");
  const { profile, ran, waited } = await stopped as unknown as {
    profile: Profile;
    ran: number;
    waited: number;
  };
  w.terminate();
  await Deno.remove(file.path);
  await Deno.mkdir(`${ROOT}bench/out`, { recursive: true });
  await Deno.writeTextFile(
    `${ROOT}bench/out/prof-${argv.label}-${workload}-${part}.cpuprofile`,
    JSON.stringify(profile),
  );
  const { cats, fns, total } = summarize(profile);
  const pct = (ms: number) => `${((100 * ms) / total).toFixed(1)}%`.padStart(6);
  console.log(
    `\n## ${workload} ${part}: ${n} pane(s) x ${mib} MiB, ${(wall / 1000).toFixed(2)} s wall, ${
      (total / 1000).toFixed(2)
    } s busy (idle ${((cats.get("idle") ?? 0) / 1000).toFixed(2)} s)`,
  );
  console.log(
    `  the worker's thread: ${(ran / 1000).toFixed(2)} s on a core (${
      (ran / (n * mib)).toFixed(1)
    } ms/MiB), ${(waited / 1000).toFixed(2)} s waiting for one`,
  );
  for (const [c, ms] of [...cats].filter(([c]) => c !== "idle").sort((a, b) => b[1] - a[1])) {
    console.log(`  ${pct(ms)}  ${c}`);
  }
  console.log("  top functions (self time):");
  for (const [f, ms] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, Number(argv.top))) {
    if (f.startsWith("(idle)")) continue;
    console.log(`  ${pct(ms)}  ${f}`);
  }
}

if (import.meta.main) {
  if (!argv.child) {
    // Run under the host's V8 flags, as the host's workers do.
    const args = [
      "run",
      "-A",
      "--quiet",
      `--v8-flags=${HOST_V8_FLAGS}`,
      import.meta.filename!,
      "--child",
      ...Deno.args,
    ];
    const { code } = await new Deno.Command(Deno.execPath(), { args, stdout: "inherit", stderr: "inherit" })
      .output();
    Deno.exit(code);
  }
  const dir = await Deno.makeTempDir({ prefix: "pfprof-" });
  try {
    console.log(
      `# worker profile "${argv.label}", ${new Date().toISOString()}, load ${
        (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ")
      }`,
    );
    for (const w of argv.workloads!.split(",") as Workload[]) {
      for (const part of ["ingest", "fanout"] as const) await profileOne(w, part, dir);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
