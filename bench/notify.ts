/**
 * What a hung notification endpoint costs the host: `system.ping` latency
 * while panes that exit non-zero fire a notify rule every 100 ms, with the
 * rule's three sinks pointing at a listener that accepts and never answers
 * (`timeout_ms` 30000: every delivery hangs its full 30 s), at a receiver
 * that answers at once, and with no rules, each on a fresh host with the V8
 * flags a detached host runs with, in one run (docs/notify.md).
 *
 *   deno run -A bench/notify.ts [--seconds 20]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { startHost } from "../tests/_harness.ts";
import { percentile, RpcConn } from "../tests/_stream.ts";
import { HOST_V8_FLAGS } from "../src/paths.ts";

const { values } = parseArgs({ args: Deno.args, options: { seconds: { type: "string", default: "20" } } });
const seconds = Number(values.seconds);

const hung = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const held: Deno.Conn[] = [];
const accepting = (async () => {
  for await (const c of hung) held.push(c);
})().catch(() => {});
const fast = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
  await req.body?.cancel();
  return new Response("ok");
});

function configFor(url: string | null): string {
  if (!url) return "{}";
  const sink = { type: "webhook", url, timeout_ms: 30_000, retries: 3, rate_per_min: 10_000 };
  return JSON.stringify({
    notify: {
      sinks: { a: sink, b: sink, c: sink },
      rules: [{ when: ["exited_nonzero"], to: ["a", "b", "c"], debounce_secs: 0 }],
    },
  });
}

async function measure(url: string | null): Promise<{ pings: number[]; sent: number }> {
  const host = await startHost({ config: configFor(url), denoFlags: [`--v8-flags=${HOST_V8_FLAGS}`] });
  try {
    const rpc = await RpcConn.open(host.socket);
    const stop = { now: false };
    let fired = 0;
    const churning = (async () => {
      const c = await RpcConn.open(host.socket);
      while (!stop.now) {
        const ws = await c.call("workspace.create", { command: "exit 1", cwd: host.dir });
        fired++;
        await new Promise((r) => setTimeout(r, 100));
        await c.call("workspace.close", { index: ws.index }).catch(() => {});
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
    return { pings, sent: fired };
  } finally {
    await host.stop();
  }
}

console.log(
  `system.ping while a pane exits non-zero every 100 ms, ${seconds} s each, load ${
    Deno.loadavg().map((x) => x.toFixed(2))
  }`,
);
const variants: [string, string | null][] = [
  ["no notify rules", null],
  ["3 sinks answering at once", `http://127.0.0.1:${fast.addr.port}/`],
  ["3 sinks that hang 30 s", `http://127.0.0.1:${(hung.addr as Deno.NetAddr).port}/`],
];
for (const [name, url] of variants) {
  const { pings, sent } = await measure(url);
  const f = (q: number) => percentile(pings, q).toFixed(2);
  console.log(
    `  ${name.padEnd(28)} p50 ${f(50)}  p99 ${f(99)}  max ${Math.max(...pings).toFixed(1)} ms ` +
      `(${pings.length} pings, ${sent} exits)`,
  );
}
hung.close();
for (const c of held) c.close();
await accepting;
await fast.shutdown();
