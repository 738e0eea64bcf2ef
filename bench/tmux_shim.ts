/**
 * The `tmux` shim's cost: one shim command's wall time (`paneflow tmux
 * display-message -p`, a whole process start from the source checkout, as
 * the shim launcher runs it) beside the real tmux 3.3a's and beside a bare
 * `deno run` of an empty script, in interleaved rounds (the order rotates
 * each round, so every command sees the same drift of the machine's load);
 * then the CPU (user + sys of the children, from sh's `times`) of the
 * commands Claude Code runs to spawn and tear down a team of two.
 *
 *   deno run -A bench/tmux_shim.ts [--rounds 30]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { cleanupAll, onCleanup, ROOT, startHost } from "./procs.ts";

const { values } = parseArgs({ args: Deno.args, options: { rounds: { type: "string", default: "30" } } });
const TMUX = "/usr/bin/tmux";

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))];
}

async function timed(argv: string[], env: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const out = await new Deno.Command(argv[0], { args: argv.slice(1), env, stdout: "piped", stderr: "piped" })
    .output();
  const ms = performance.now() - t0;
  if (!out.success) throw new Error(`${argv.join(" ")} failed: ${new TextDecoder().decode(out.stderr)}`);
  return ms;
}

/** user+sys seconds of the children of `sh -c script` (the last line of `times`). */
async function childCpu(script: string, env: Record<string, string>): Promise<number> {
  const out = await new Deno.Command("sh", { args: ["-c", `${script}\ntimes`], env, stdout: "piped" })
    .output();
  const last = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
  const secs = [...last.matchAll(/(\d+)m([\d.]+)s/g)].map((m) => Number(m[1]) * 60 + Number(m[2]));
  return secs.reduce((a, b) => a + b, 0);
}

const TEAM = (tmux: string, lead: string) =>
  `t=${tmux}
a=$($t split-window -d -t ${lead} -h -l 70% -P -F '#{pane_id}' -- cat)
$t respawn-pane -k -t "$a" -- 'exec sleep 60'
$t list-panes -t ${lead} -F '#{pane_id}' >/dev/null
b=$($t split-window -d -t "$a" -v -P -F '#{pane_id}' -- cat)
$t respawn-pane -k -t "$b" -- 'exec sleep 60'
$t select-layout -t ${lead} tiled
$t display-message -p -t ${lead} '#{window_id}' >/dev/null
$t kill-pane -t "$a"
$t kill-pane -t "$b"`;

async function main() {
  const haveTmux = await Deno.stat(TMUX).then(() => true, () => false);
  const dir = await Deno.makeTempDir({ prefix: "pftmuxbench-" });
  onCleanup(() => Deno.remove(dir, { recursive: true }).catch(() => {}));
  const server = `pfbench-${Deno.pid}`;
  onCleanup(async () => {
    await new Deno.Command(TMUX, { args: ["-L", server, "kill-server"], stderr: "null" }).output().catch(
      () => {},
    );
  });
  const host = await startHost(dir, "h", {});
  const lead =
    (await host.rpc.call("workspace.create", { name: "bench", command: "exec sleep 600" })).surface_id;
  const env = { ...host.env, PANEFLOW_IPC_SCRIPTING: "1" };
  const deno = Deno.execPath();
  const shimArgv = [deno, "run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, "tmux"];
  const cmds: Record<string, string[]> = {
    shim: [...shimArgv, "display-message", "-p", "-t", `%${lead}`, "#{pane_id}"],
    bare: [deno, "run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}bench/empty.ts`],
  };
  if (haveTmux) {
    await timed([TMUX, "-L", server, "-f", "/dev/null", "new-session", "-d", "-s", "b", "sleep 600"], env);
    cmds.tmux = [TMUX, "-L", server, "display-message", "-p", "-t", "%0", "#{pane_id}"];
  } else console.warn(`${TMUX} is missing: the tmux column is left out`);
  const names = Object.keys(cmds);
  const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  for (const n of names) await timed(cmds[n], env); // warm-up: module cache, page cache
  const rounds = Number(values.rounds);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const n = names[(i + r) % names.length];
      times[n].push(await timed(cmds[n], env));
    }
  }
  console.log(`one command, wall ms over ${rounds} interleaved rounds (median / p90):`);
  for (const n of names) {
    console.log(
      `  ${n.padEnd(5)} ${quantile(times[n], 0.5).toFixed(1).padStart(7)} / ${
        quantile(times[n], 0.9).toFixed(1)
      }`,
    );
  }
  const ratio = quantile(times.shim, 0.5) / quantile(times.bare, 0.5);
  console.log(`  shim / bare deno run: ${ratio.toFixed(2)}x`);
  const shimPath = `${dir}/shim-tmux`;
  await Deno.writeTextFile(shimPath, `#!/bin/sh\nexec ${shimArgv.map((a) => `'${a}'`).join(" ")} "$@"\n`, {
    mode: 0o755,
  });
  const shimCpu = await childCpu(TEAM(shimPath, `%${lead}`), env);
  console.log(`team of two, spawn + teardown (10 commands), CPU of the commands (user+sys):`);
  console.log(`  shim  ${shimCpu.toFixed(2)} s`);
  if (haveTmux) {
    const tmuxCpu = await childCpu(TEAM(`'${TMUX}' -L ${server}`, "%0"), env);
    console.log(`  tmux  ${tmuxCpu.toFixed(2)} s`);
  }
}

try {
  await main();
} finally {
  await cleanupAll();
}
