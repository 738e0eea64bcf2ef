/**
 * What opening and closing panes costs everyone else: `system.ping` latency
 * of a host with `--panes` panes of the soak's programs while a client opens
 * and closes a workspace every 200 ms, with panes spawned directly
 * (src/core/pane/host_pty.ts) by the spawner while the pane workers parse
 * at a lower priority (src/core/pane/spawner.ts), the same with the
 * workers at the host's priority (`PANEFLOW_WORKER_NICE=0`), through
 * node-pty's fork (`PANEFLOW_SPAWN=node-pty`, workers at the host's
 * priority too), and without the churn, each on a fresh host with the V8
 * flags a detached host runs with, in one run.
 *
 *   deno run -A bench/churn_ping.ts [--panes 100] [--seconds 20]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { startHost } from "../tests/_harness.ts";
import { percentile, RpcConn } from "../tests/_stream.ts";
import { PROGRAMS } from "../scripts/soak.ts";
import { HOST_V8_FLAGS } from "../src/paths.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { panes: { type: "string", default: "100" }, seconds: { type: "string", default: "20" } },
});
const panes = Number(values.panes);
const seconds = Number(values.seconds);

const VARIANTS: { name: string; env: Record<string, string>; churn: boolean }[] = [
  { name: "direct", env: {}, churn: true },
  { name: "direct, workers not niced", env: { PANEFLOW_WORKER_NICE: "0" }, churn: true },
  { name: "node-pty", env: { PANEFLOW_SPAWN: "node-pty" }, churn: true },
  { name: "direct", env: {}, churn: false },
];

async function measure(env: Record<string, string>, churn: boolean): Promise<number[]> {
  const host = await startHost({
    config: '{"terminal":{"scrollback_lines":2000}}',
    denoFlags: [`--v8-flags=${HOST_V8_FLAGS}`],
    env,
  });
  try {
    const rpc = await RpcConn.open(host.socket);
    for (let i = 0; i < panes; i++) {
      await rpc.call("workspace.create", { command: PROGRAMS[i % PROGRAMS.length], cwd: host.dir });
    }
    await new Promise((r) => setTimeout(r, 2000));
    const stop = { now: false };
    const churning = (async () => {
      if (!churn) return;
      const c = await RpcConn.open(host.socket);
      while (!stop.now) {
        const ws = await c.call("workspace.create", {
          command: "echo churn",
          cwd: host.dir,
        });
        await c.call("workspace.close", { index: ws.index });
        await new Promise((r) => setTimeout(r, 200));
      }
      c.close();
    })();
    const pings: number[] = [];
    const end = performance.now() + seconds * 1000;
    while (performance.now() < end) {
      const t = performance.now();
      await rpc.call("system.ping");
      pings.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 20));
    }
    stop.now = true;
    await churning;
    rpc.close();
    return pings;
  } finally {
    await host.stop();
  }
}

console.log(
  `system.ping with ${panes} panes, ${seconds} s each, load ${Deno.loadavg().map((x) => x.toFixed(2))}`,
);
for (const { name, env, churn } of VARIANTS) {
  const pings = await measure(env, churn);
  const f = (q: number) => percentile(pings, q).toFixed(2);
  console.log(
    `  ${name.padEnd(26)} ${churn ? "a pane opened and closed every 200 ms" : "no churn".padEnd(37)}  ` +
      `p50 ${f(50)}  p99 ${f(99)}  max ${Math.max(...pings).toFixed(1)} ms (${pings.length})`,
  );
}
