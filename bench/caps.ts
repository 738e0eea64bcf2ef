/**
 * What least privilege costs (docs/security.md):
 *
 * 1. identifying a caller: `classify()` over the real /proc with every pane
 *    of a host of `--panes` (default 100) as a candidate, for a program in a
 *    pane and for the owner (the longest walk: every ancestor up to pid 1);
 * 2. a new connection's first `system.ping` (accept, SO_PEERCRED, the
 *    classification, the call) and `system.ping` over one connection (the
 *    capability check on every call), against this checkout and, with
 *    `--against <dir>`, another checkout of paneflow (e.g. main), in turns.
 *
 *   deno run -A bench/caps.ts [--panes 100] [--pings 2000] [--against /work/main]
 *
 * @module
 */
import { parseArgs } from "node:util";
import { classify, procReader } from "../src/caps/identify.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    panes: { type: "string", default: "100" },
    pings: { type: "string", default: "2000" },
    rounds: { type: "string", default: "2" },
    against: { type: "string" },
  },
});
const args = {
  panes: Number(values.panes),
  pings: Number(values.pings),
  rounds: Number(values.rounds),
  against: values.against,
};
const HERE = new URL("../", import.meta.url).pathname;

type Harness = typeof import("../tests/_harness.ts");
type Stream = typeof import("../tests/_stream.ts");

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}
const fmt = (v: number[]) => `p50 ${pct(v, 50).toFixed(3)} ms, p99 ${pct(v, 99).toFixed(3)} ms`;

async function measure(root: string, label: string, identify: boolean) {
  const h: Harness = await import(`${root}tests/_harness.ts`);
  const st: Stream = await import(`${root}tests/_stream.ts`);
  const host = await h.startHost({ config: JSON.stringify({ host: { idle_timeout_secs: 600 } }) });
  try {
    for (let i = 0; i < args.panes; i++) {
      await host.rpc(i === 0 ? "workspace.create" : "surface.split", {
        ...(i === 0 ? {} : { direction: "h" }),
        command: "exec sleep 600",
      });
    }
    const list = await host.call("surface.list") as { surfaces: { surface_id: number; pid: number }[] };
    const conn = await st.RpcConn.open(host.socket);
    const pings: number[] = [];
    for (let i = 0; i < args.pings; i++) {
      const t = performance.now();
      await conn.call("system.ping");
      pings.push(performance.now() - t);
    }
    conn.close();
    const fresh: number[] = [];
    for (let i = 0; i < 200; i++) {
      const t = performance.now();
      const c = await st.RpcConn.open(host.socket);
      await c.call("system.ping");
      fresh.push(performance.now() - t);
      c.close();
    }
    console.log(`${label}: ping over one connection: ${fmt(pings)}`);
    console.log(`${label}: new connection + first ping:  ${fmt(fresh)}`);
    if (identify) {
      const facts = {
        pid: host.pid,
        uid: Deno.uid() ?? 0,
        start: procReader.stat(host.pid)?.start ?? 0,
        hostId: "bench",
        socketPath: host.socket,
        panes: list.surfaces.map((s) => ({ id: s.surface_id, pid: s.pid })),
      };
      for (
        const [who, pid] of [["a pane's program", list.surfaces.at(-1)!.pid], [
          "the owner",
          Deno.pid,
        ]] as const
      ) {
        const times: number[] = [];
        let kind = "";
        for (let i = 0; i < 1000; i++) {
          const t = performance.now();
          kind = classify({ pid, uid: facts.uid, gid: 0 }, facts, procReader).kind;
          times.push(performance.now() - t);
        }
        console.log(`identify ${who} (${kind}) among ${list.surfaces.length} panes: ${fmt(times)}`);
      }
    }
  } finally {
    await host.stop();
  }
}

for (let round = 0; round < args.rounds; round++) {
  if (args.against) await measure(args.against.replace(/\/?$/, "/"), `against (${args.against})`, false);
  await measure(HERE, "this checkout", round === 0);
}
