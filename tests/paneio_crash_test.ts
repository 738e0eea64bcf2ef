/**
 * Crash safety of queue delivery (docs/paneio.md): the host is killed with
 * SIGKILL in the middle of delivering, then restarted on the same queue;
 * nothing is lost (every message ends completed or failed) and nothing is
 * doubled (no message runs twice; one left in progress is marked failed
 * with reason `interrupted`, never retyped). Looped (PANEFLOW_CRASH_LOOPS,
 * default 20).
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { rawExchange, spawnServe, waitUntil } from "./_harness.ts";
import { appendMessage, ensureRoot, newId } from "../src/paneio/store.ts";

const LOOPS = Number(Deno.env.get("PANEFLOW_CRASH_LOOPS") ?? 20);
const PER_LOOP = 6;

type Msg = { id: string; status: string; content: string; metadata: Record<string, unknown> };

async function rpc(socket: string, method: string, params: unknown = {}) {
  const lines = await rawExchange(socket, JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }) + "\n", {
    timeoutMs: 20_000,
  });
  const res = JSON.parse(lines[0] ?? "null");
  if (!res || res.error) throw new Error(`${method}: ${JSON.stringify(res?.error)}`);
  return res.result;
}

async function read(file: string): Promise<Msg[]> {
  try {
    return parseAllDocuments(await Deno.readTextFile(file)).map((d) => d.toJS() as Msg).filter(Boolean);
  } catch {
    return [];
  }
}

Deno.test(`SIGKILL mid-delivery, restart: nothing lost or doubled (${LOOPS} times)`, async () => {
  const dir = await Deno.makeTempDir({ prefix: "pfk-" });
  const root = `${dir}/q`;
  const work = `${dir}/w`;
  await Deno.mkdir(work);
  await ensureRoot(root);
  const socket = `${dir}/s.sock`;
  const config = `${dir}/config.jsonc`;
  await Deno.writeTextFile(config, JSON.stringify({ queue: { root, grace_secs: 2 } }));
  const env = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? dir,
    SHELL: "/bin/sh",
    PANEFLOW_SOCKET_PATH: socket,
    PANEFLOW_CONFIG: config,
  };
  const start = async () => {
    const served = spawnServe(env);
    await waitUntil("the host", async () => (await rpc(socket, "system.ping")).pong, { timeoutMs: 20_000 });
    const ws = await rpc(socket, "workspace.create", {
      cwd: work,
      command: "PS1='$ ' exec sh",
      pane_name: "r1",
    });
    const ready = await rpc(socket, "surface.is_ready", { surface_id: ws.surface_id, timeout_ms: 15_000 });
    assert.ok(ready.ready, JSON.stringify(ready));
    return served;
  };
  const file = `${root}/queue/boss_to_r1.yaml`;
  let interrupted = 0;
  let host = await start();
  try {
    for (let loop = 0; loop < LOOPS; loop++) {
      const ids: string[] = [];
      for (let n = 0; n < PER_LOOP; n++) {
        const id = newId();
        ids.push(id);
        await appendMessage(root, {
          id,
          from: "boss",
          to: "r1",
          type: "task",
          status: "pending",
          content: `echo ${id} >> r1.log`,
          timestamp: new Date().toISOString(),
          metadata: {},
        });
      }
      // Kill while a message is being delivered: at a varying point after the first claim.
      await waitUntil("a delivery under way", async () => {
        const ms = (await read(file)).filter((m) => ids.includes(m.id));
        return ms.some((m) => m.status === "in_progress" || m.status === "completed");
      }, { timeoutMs: 20_000, intervalMs: 5 });
      await new Promise((r) => setTimeout(r, (loop * 37) % 150));
      host.child.kill("SIGKILL");
      await host.exited;
      host = await start();
      const final = await waitUntil("every message finished", async () => {
        const ms = (await read(file)).filter((m) => ids.includes(m.id));
        return ms.length === PER_LOOP && ms.every((m) => m.status === "completed" || m.status === "failed")
          ? ms
          : null;
      }, { timeoutMs: 30_000, intervalMs: 50 });
      const log = (await Deno.readTextFile(`${work}/r1.log`).catch(() => "")).split("\n");
      for (const m of final) {
        const runs = log.filter((l) => l === m.id).length;
        if (m.status === "completed") {
          assert.equal(runs, 1, `loop ${loop}: ${m.id} completed but ran ${runs} times`);
        } else {
          assert.equal(m.metadata.reason, "interrupted", `loop ${loop}: ${JSON.stringify(m)}`);
          assert.ok(runs <= 1, `loop ${loop}: ${m.id} ran ${runs} times`);
          interrupted++;
        }
      }
      // At most the one in flight was interrupted.
      assert.ok(final.filter((m) => m.status === "failed").length <= 1, JSON.stringify(final));
    }
    console.log(`${LOOPS} kills: ${interrupted} message(s) marked interrupted, none lost or doubled`);
  } finally {
    host.child.kill("SIGTERM");
    await host.exited;
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
