/**
 * Where the host's main thread spends its time under the soak's load
 * (scripts/soak.ts: `--panes` panes of its mixed programs, a client reading
 * and typing, pings): the host runs with `--inspect` on loopback, and V8's
 * sampling profiler records its main thread for `--seconds`. Prints self
 * time by function and by file, the pings' p50/p99 meanwhile, and writes the
 * profile to bench/out/host-main.cpuprofile (open it in Chrome DevTools).
 *
 * With `--churn`, the soak's churn too: a workspace opened and closed every
 * 200 ms.
 *
 *   deno run -A bench/host_profile.ts [--panes 100] [--seconds 20] [--top 25] [--churn]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { startHost } from "../tests/_harness.ts";
import { percentile, RpcConn } from "../tests/_stream.ts";
import { churn, PROGRAMS } from "../scripts/soak.ts";
import { type Profile, summarize } from "./_cpuprofile.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    panes: { type: "string", default: "100" },
    seconds: { type: "string", default: "20" },
    top: { type: "string", default: "25" },
    churn: { type: "boolean", default: false },
  },
});
const OUT = new URL("./out/", import.meta.url).pathname;

/** A Chrome DevTools Protocol session on one inspector WebSocket. */
async function cdp(url: string) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.onopen = resolve;
    ws.onerror = reject;
  });
  let next = 1;
  const waiting = new Map<number, (r: { result?: unknown; error?: unknown }) => void>();
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    if (m.id) waiting.get(m.id)?.(m);
  };
  return {
    async call<T>(method: string, params: unknown = {}): Promise<T> {
      const id = next++;
      const reply = new Promise<{ result?: unknown; error?: unknown }>((r) => waiting.set(id, r));
      ws.send(JSON.stringify({ id, method, params }));
      const r = await reply;
      if (r.error) throw new Error(`${method}: ${JSON.stringify(r.error)}`);
      return r.result as T;
    },
    close: () => ws.close(),
  };
}

/** A loopback port free right now. */
function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

const port = freePort();
const host = await startHost({
  denoFlags: [`--inspect=127.0.0.1:${port}`],
  config: '{"terminal":{"scrollback_lines":2000}}',
});
try {
  const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
  const url = targets[0]?.webSocketDebuggerUrl as string | undefined;
  if (!url) throw new Error(`no inspector target on port ${port}: ${JSON.stringify(targets)}`);
  const rpc = await RpcConn.open(host.socket);
  const ids: number[] = [];
  for (let i = 0; i < Number(values.panes); i++) {
    const r = await rpc.call("workspace.create", {
      command: PROGRAMS[i % PROGRAMS.length],
      cwd: host.dir,
    });
    ids.push(r.surface_id);
  }
  await new Promise((r) => setTimeout(r, 3000)); // warm-up
  const stop = { now: false };
  const reader = (async () => {
    const c = await RpcConn.open(host.socket);
    for (let n = 0; !stop.now; n++) {
      const id = ids[n % ids.length];
      await c.call("surface.read", { surface_id: id, lines: 50 });
      if (n % 4 === 2) await c.call("surface.send_text", { surface_id: id, text: `typed ${n}\r` });
      await new Promise((r) => setTimeout(r, 50));
    }
    c.close();
  })();
  // With --churn, the soak's workspace opened and closed every 200 ms.
  const churning = values.churn && churn(host.socket, host.dir, stop);
  const session = await cdp(url);
  await session.call("Profiler.enable");
  await session.call("Profiler.setSamplingInterval", { interval: 250 });
  await session.call("Profiler.start");
  const pings: number[] = [];
  const end = performance.now() + Number(values.seconds) * 1000;
  while (performance.now() < end) {
    const t = performance.now();
    await rpc.call("system.ping");
    pings.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 20));
  }
  const { profile } = await session.call<{ profile: Profile }>("Profiler.stop");
  stop.now = true;
  await reader;
  await churning;
  session.close();
  rpc.close();
  await Deno.mkdir(OUT, { recursive: true });
  await Deno.writeTextFile(`${OUT}host-main.cpuprofile`, JSON.stringify(profile));
  const { fns, total } = summarize(profile);
  const wall = (profile.endTime - profile.startTime) / 1000;
  const [load] = Deno.loadavg();
  console.log(
    `host main thread, ${values.panes} panes, ${(wall / 1000).toFixed(1)} s: busy ${
      (total / 1000).toFixed(2)
    } s (${(100 * total / wall).toFixed(1)} %); ping p50 ${percentile(pings, 50).toFixed(2)} ms, p99 ${
      percentile(pings, 99).toFixed(2)
    } ms; load ${load.toFixed(2)}`,
  );
  const files = new Map<string, number>();
  for (const [k, ms] of fns) {
    if (k.startsWith("(idle)")) continue;
    const file = k.slice(k.lastIndexOf(" ") + 1).replace(/:\d+$/, "") || "(native ops, V8)";
    files.set(file, (files.get(file) ?? 0) + ms);
  }
  const top = (m: Map<string, number>, n: number) =>
    [...m].filter(([k]) => !k.startsWith("(idle)")).sort((a, b) => b[1] - a[1]).slice(0, n)
      .map(([k, ms]) => `  ${(100 * ms / total).toFixed(1).padStart(5)}%  ${k}`).join("\n");
  console.log(`by file (self time, share of busy):\n${top(files, 12)}`);
  console.log(`by function:\n${top(fns, Number(values.top))}`);
} finally {
  await host.stop();
}
