/**
 * One-shot `paneflow read` through the installed CLI (`deno task install`:
 * an sh script running the bundle, scripts/build.ts) against a bare
 * `deno run` of an empty script, as whole processes, with hyperfine.
 * hyperfine runs one command's runs back to back, so this runs it in
 * `--rounds` rounds of `--runs` runs per command, rotating the order each
 * round, and takes the medians over every run: both commands see the same
 * drift of the machine's load.
 *
 *   deno run -A bench/oneshot.ts [--rounds 10] [--runs 10]
 *
 * Bare baselines: `deno run -A bench/empty.ts` in the repo (deno.json found,
 * as the installed CLI uses it) and `deno run -A --no-config` of it from /tmp.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { build, install } from "../scripts/build.ts";
import { cleanupAll, onCleanup, ROOT, startHost } from "./procs.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { rounds: { type: "string", default: "10" }, runs: { type: "string", default: "10" } },
});

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function main() {
  if (!(await new Deno.Command("sh", { args: ["-c", "command -v hyperfine"] }).output()).success) {
    console.error("hyperfine is not installed (apt-get install hyperfine); skipping");
    return;
  }
  const dir = await Deno.makeTempDir({ prefix: "pfoneshot-" });
  onCleanup(() => Deno.remove(dir, { recursive: true }).catch(() => {}));
  try {
    const host = await startHost(dir, "h", { host: { idle_timeout_secs: 600 } });
    const id = (await host.rpc.call("workspace.create", {
      command: "seq 1 5000; exec sleep 600",
    })).surface_id;
    await new Promise((r) => setTimeout(r, 1500));
    // As run.ts does: the bundle inside the project (it runs with the project's deno.json).
    await Deno.mkdir(`${ROOT}dist`, { recursive: true });
    const cli = await Deno.makeTempDir({ dir: `${ROOT}dist`, prefix: "bench-oneshot-" });
    onCleanup(() => Deno.remove(cli, { recursive: true }).catch(() => {}));
    await build(cli);
    await install(cli, `${dir}/bin`);
    await Deno.copyFile(`${ROOT}bench/empty.ts`, `${dir}/empty.ts`);
    const deno = Deno.execPath();
    const q = (s: string) => `'${s}'`;
    const cmds: Record<string, string> = {
      installed: `${q(`${dir}/bin/paneflow`)} read ${id} --raw`,
      bare: `${q(deno)} run -A ${q(`${ROOT}bench/empty.ts`)}`,
      bare_noconfig: `cd /tmp && ${q(deno)} run -A --no-config ${q(`${dir}/empty.ts`)}`,
    };
    const env = { ...host.env };
    delete env.PANEFLOW_CONFIG;
    const out = await new Deno.Command(`${dir}/bin/paneflow`, { args: ["read", String(id), "--raw"], env })
      .output();
    if (!new TextDecoder().decode(out.stdout).includes("5000")) throw new Error("installed read failed");
    const names = Object.keys(cmds);
    const times: Record<string, number[]> = {};
    const rounds = Number(values.rounds);
    for (let r = 0; r < rounds; r++) {
      const order = names.map((_, i) => names[(i + r) % names.length]);
      const json = `${dir}/round.json`;
      const res = await new Deno.Command("hyperfine", {
        args: [
          "-N",
          "--warmup",
          "2",
          "--runs",
          values.runs!,
          "--export-json",
          json,
          ...order.flatMap((n) => ["-n", n, n === "bare_noconfig" ? `sh -c "${cmds[n]}"` : cmds[n]]),
        ],
        env,
        cwd: ROOT,
        stdout: "null",
        stderr: "piped",
      }).output();
      if (!res.success) throw new Error(new TextDecoder().decode(res.stderr));
      const data = JSON.parse(await Deno.readTextFile(json)) as {
        results: { command: string; times: number[] }[];
      };
      for (const x of data.results) (times[x.command] ??= []).push(...x.times.map((t) => t * 1000));
    }
    const m = Object.fromEntries(names.map((n) => [n, median(times[n])]));
    const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
    console.log(`one-shot read, hyperfine, ${rounds} rounds x ${values.runs} runs, load ${load}`);
    console.log(`  installed \`paneflow read\`: ${m.installed.toFixed(1)} ms`);
    console.log(
      `  bare \`deno run\` empty (repo, deno.json): ${m.bare.toFixed(1)} ms -> ${
        (m.installed / m.bare).toFixed(2)
      }x ${m.installed <= 1.15 * m.bare ? "PASS" : "FAIL"} (<= 1.15x)`,
    );
    console.log(
      `  bare \`deno run --no-config\` empty (/tmp; sh -c adds its exec): ${
        m.bare_noconfig.toFixed(1)
      } ms -> ${(m.installed / m.bare_noconfig).toFixed(2)}x`,
    );
    // The installed CLI is an sh script too: its exec is part of what users pay.
    await Deno.mkdir(`${ROOT}bench/out`, { recursive: true });
    await Deno.writeTextFile(
      `${ROOT}bench/out/oneshot.json`,
      JSON.stringify({ date: new Date().toISOString(), load, medians_ms: m, cmds, times }, null, 1),
    );
  } finally {
    await cleanupAll();
  }
}

if (import.meta.main) await main();
