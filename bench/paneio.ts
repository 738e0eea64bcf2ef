/**
 * PaneIO queue benchmarks (issue 16), run on their own:
 *
 *   deno run -A bench/paneio.ts [--runs N] [--backlog N]
 *
 * 1. Delivery latency: a message file renamed into queue/ (the atomic
 *    write every writer makes) until its text shows in the recipient's pane
 *    (an `events.subscribe` frame, then a read that finds it). The raw limit
 *    in the same run: the same rename seen by a bare Deno.watchFs in this
 *    process (what any watcher, tmux-based or not, must wait for first).
 * 2. A backlog of N messages (default 1000) from 4 senders to 2 shell panes
 *    drained, with `system.ping` every 10 ms on its own connection: drain
 *    time and the ping's p50/p99.
 *
 * @module
 */
import { cleanupAll, startHost } from "./procs.ts";
import { percentile, RpcConn, subscribe } from "../tests/_stream.ts";
import { appendMessage, ensureRoot, messageYaml, newId } from "../src/paneio/store.ts";
import { parseAllDocuments } from "yaml";

const args = Deno.args;
const opt = (name: string, def: number) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const RUNS = opt("runs", 50);
const BACKLOG = opt("backlog", 1000);

const dir = await Deno.makeTempDir({ prefix: "pf-bench-q-" });
const root = `${dir}/q`;
await ensureRoot(root);
const ms = (v: number) => v.toFixed(1);

try {
  const host = await startHost(dir, "host", { queue: { root } });
  const rpc = host.rpc;
  const mk = async (name: string) => {
    const ws = await rpc.call("workspace.create", {
      cwd: dir,
      command: "PS1='$ ' exec sh",
      pane_name: name,
    }) as {
      surface_id: number;
    };
    await rpc.call("surface.is_ready", { surface_id: ws.surface_id, timeout_ms: 20_000 });
    return ws.surface_id;
  };
  const r1 = await mk("r1");

  // 1. rename -> text in the pane.
  const events = await subscribe(host.socket, { surfaces: [r1], types: ["surface_changed"] });
  const reader = await RpcConn.open(host.socket);
  const lat: number[] = [];
  const raw: number[] = [];
  const rawDir = `${dir}/raw`;
  await Deno.mkdir(rawDir);
  const rawWatch = Deno.watchFs(rawDir);
  const rawEvents: number[] = [];
  (async () => {
    for await (const ev of rawWatch) if (ev.kind !== "access") rawEvents.push(performance.now());
  })();
  for (let i = 0; i < RUNS + 3; i++) {
    const token = `tok${i}x${Math.random().toString(36).slice(2, 8)}`;
    const text = messageYaml({
      id: newId(),
      from: `s${i}`,
      to: "r1",
      type: "task",
      status: "pending",
      content: `: ${token}`,
      timestamp: new Date().toISOString(),
      metadata: {},
    });
    const tmp = `${root}/queue/.s${i}.tmp`;
    await Deno.writeTextFile(tmp, text);
    const from = events.frames.length;
    const t0 = performance.now();
    await Deno.rename(tmp, `${root}/queue/s${i}_to_r1.yaml`);
    // Wait for a change frame after t0 whose screen holds the token.
    let seen = -1;
    for (let k = from; seen < 0; k++) {
      while (events.frames.length <= k) await new Promise((r) => setTimeout(r, 0));
      const r = await reader.call("surface.read", { surface_id: r1, lines: 5, fenced: false }) as {
        text: string;
      };
      if (r.text.includes(token)) seen = events.times[k];
    }
    if (i >= 3) lat.push(seen - t0);
    // The raw limit: a rename seen by a bare watcher.
    await Deno.writeTextFile(`${rawDir}/.t`, text);
    const n = rawEvents.length;
    const r0 = performance.now();
    await Deno.rename(`${rawDir}/.t`, `${rawDir}/m${i}.yaml`);
    while (rawEvents.length === n) await new Promise((r) => setTimeout(r, 0));
    if (i >= 3) raw.push(rawEvents[n] - r0);
    // Let the delivery finish before the next.
    const file = `${root}/queue/s${i}_to_r1.yaml`;
    while (!(await Deno.readTextFile(file)).includes("status: completed")) {
      await new Promise((r) => setTimeout(r, 2));
    }
  }
  rawWatch.close();
  await events.close();
  reader.close();
  console.log(
    `rename -> text in pane: p50 ${ms(percentile(lat, 50))} ms, p95 ${
      ms(percentile(lat, 95))
    } ms (n=${lat.length}); ` +
      `raw watchFs limit p50 ${ms(percentile(raw, 50))} ms`,
  );

  // 2. backlog drain with system.ping alongside.
  await mk("r2");
  const senders = ["w1", "w2", "w3", "w4"];
  // Written first, delivered after: the host is stopped from delivering by a not-yet-existing recipient? No:
  // messages go to r1/r2, written as fast as the store allows.
  const tWrite = performance.now();
  await Promise.all(senders.map(async (w) => {
    for (let n = 0; n < BACKLOG / senders.length; n++) {
      await appendMessage(root, {
        id: newId(),
        from: w,
        to: n % 2 ? "r2" : "r1",
        type: "task",
        status: "pending",
        content: `: ${w}-${n}`,
        timestamp: new Date().toISOString(),
        metadata: {},
      });
    }
  }));
  const writeMs = performance.now() - tWrite;
  // Opened now: a connection idle while the backlog is written would pass the host's idle deadline.
  const pinger = await RpcConn.open(host.socket);
  const pings: number[] = [];
  let done = false;
  const pingLoop = (async () => {
    while (!done) {
      const t = performance.now();
      await pinger.call("system.ping");
      pings.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const t0 = performance.now();
  while (true) {
    let finished = 0;
    for (const w of senders) {
      for (const r of ["r1", "r2"]) {
        const t = await Deno.readTextFile(`${root}/queue/${w}_to_${r}.yaml`).catch(() => "");
        finished += (t.match(/status: completed/g) ?? []).length;
      }
    }
    if (finished >= BACKLOG) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const drainMs = performance.now() - t0 + writeMs;
  done = true;
  await pingLoop;
  let docs = 0;
  for (const w of senders) {
    for (const r of ["r1", "r2"]) {
      docs += parseAllDocuments(await Deno.readTextFile(`${root}/queue/${w}_to_${r}.yaml`)).length;
    }
  }
  console.log(
    `backlog of ${BACKLOG}: written in ${Math.round(writeMs)} ms, drained in ${
      (drainMs / 1000).toFixed(1)
    } s ` +
      `(${Math.round(BACKLOG / (drainMs / 1000))}/s; ${docs} documents); system.ping p50 ${
        ms(percentile(pings, 50))
      } ms ` +
      `p99 ${ms(percentile(pings, 99))} ms max ${ms(Math.max(...pings))} ms (n=${pings.length})`,
  );
  pinger.close();
} finally {
  await cleanupAll();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
