/**
 * PaneIO queue benchmarks (docs/paneio.md), run on their own:
 *
 *   deno run -A bench/paneio.ts [--runs N] [--backlog N]
 *
 * 1. Delivery latency: a message file renamed into queue/ (the atomic
 *    write every writer makes) until its text shows in the recipient's pane
 *    (an `events.subscribe` frame, then a read that finds it). The raw limit
 *    in the same run: the same rename seen by a bare Deno.watchFs in this
 *    process (what any watcher, tmux-based or not, must wait for first).
 * 2. A backlog of N messages (default 1000) from 4 senders to 2 shell panes,
 *    with `system.ping` every 10 ms (./pinger.ts: its own thread and
 *    connection, so the bench's own work cannot delay it) all along: first
 *    the host idle (the floor of the ping on this machine now), then the N
 *    messages written (appended by 4 writers at once) while no pane has the
 *    recipients' names, then the two panes renamed to them and the backlog
 *    drained. Prints the drain time and the ping's p50/p99 in each phase.
 *    PANEFLOW_QUEUE_TRACE=1 makes the host log each delivery's steps.
 *
 * @module
 */
import { cleanupAll, pingWorker, startHost } from "./procs.ts";
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

/** CPU time (ms) of a process's main thread (its event loop) and of the whole process, from /proc. */
function cpu(pid: number): { main: number; all: number } {
  let main = 0;
  let all = 0;
  try {
    for (const t of Deno.readDirSync(`/proc/${pid}/task`)) {
      const stat = Deno.readTextFileSync(`/proc/${pid}/task/${t.name}/stat`);
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      const ms = (Number(f[11]) + Number(f[12])) * 10;
      all += ms;
      if (t.name === String(pid)) main = ms;
    }
  } catch { /* gone */ }
  return { main, all };
}

const dir = await Deno.makeTempDir({ prefix: "pf-bench-q-" });
const root = `${dir}/q`;
await ensureRoot(root);
const ms = (v: number) => v.toFixed(1);

try {
  // The backlog waits for its recipients' panes far longer than it takes to write it.
  const host = await startHost(dir, "host", { queue: { root, grace_secs: 3600 } });
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
    `rename -> text in pane: p50 ${ms(percentile(lat, 50))} ms, p95 ${ms(percentile(lat, 95))} ms, p99 ${
      ms(percentile(lat, 99))
    } ms (n=${lat.length}); raw watchFs limit p50 ${ms(percentile(raw, 50))} ms`,
  );

  // 2. backlog drain with system.ping alongside, in phases.
  // The recipients' names are free until the drain: r1 gives its name up, two panes take them then.
  await rpc.call("surface.rename", { surface_id: r1, name: "r1-old" });
  const idle = await mk("idle1");
  const idle2 = await mk("idle2");
  const senders = ["w1", "w2", "w3", "w4"];
  const pings: Record<string, number[]> = {};
  let pinger = await pingWorker(host.socket);
  const endPhase = async (name: string) => {
    pings[name] = await pinger.stop();
    pinger = await pingWorker(host.socket);
  };
  await new Promise((r) => setTimeout(r, 3000));
  await endPhase("idle");
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
  // Let the host take in the last writes before the drain's clock starts.
  await new Promise((r) => setTimeout(r, 500));
  await endPhase("write");
  const t0 = performance.now();
  const cpu0 = cpu(host.pid);
  await rpc.call("surface.rename", { surface_id: idle, name: "r1" });
  await rpc.call("surface.rename", { surface_id: idle2, name: "r2" });
  while (true) {
    const info = await rpc.call("queue.info") as { counts: Record<string, number> };
    if (info.counts.completed + info.counts.failed >= BACKLOG + RUNS + 3) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const drainMs = performance.now() - t0;
  const cpu1 = cpu(host.pid);
  pings.drain = await pinger.stop();
  let docs = 0;
  let completed = 0;
  for (const w of senders) {
    for (const r of ["r1", "r2"]) {
      const text = await Deno.readTextFile(`${root}/queue/${w}_to_${r}.yaml`);
      docs += parseAllDocuments(text).length;
      completed += (text.match(/^status: completed$/gm) ?? []).length;
    }
  }
  const p = (k: string) =>
    `p50 ${ms(percentile(pings[k], 50))} p99 ${ms(percentile(pings[k], 99))} max ${
      ms(Math.max(...pings[k]))
    } ms (n=${pings[k].length})`;
  console.log(`system.ping, host idle (the floor now): ${p("idle")}`);
  console.log(`system.ping while ${BACKLOG} messages are written (${Math.round(writeMs)} ms): ${p("write")}`);
  console.log(
    `backlog of ${BACKLOG} drained in ${(drainMs / 1000).toFixed(1)} s (${
      Math.round(BACKLOG / (drainMs / 1000))
    }/s; ${docs} documents, ${completed} completed); system.ping meanwhile: ${p("drain")}`,
  );
  const mainMs = cpu1.main - cpu0.main;
  console.log(
    `host CPU during the drain: event loop thread ${mainMs} ms (${
      (mainMs / BACKLOG).toFixed(2)
    } ms per message), ` +
      `all threads ${cpu1.all - cpu0.all} ms`,
  );
} finally {
  await cleanupAll();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
