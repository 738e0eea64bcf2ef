import assert from "node:assert/strict";
import type { WorkerEvent } from "./worker_api.ts";
import { PanePool } from "./pool.ts";
import { PaneError, PaneErrorCode } from "./errors.ts";
import { RpcError } from "../../errors.ts";
import { ErrorReason } from "../../spec/codes.ts";

const spawnOpts = (id: number) => ({
  id,
  file: "/bin/sh",
  args: ["-c", `echo pane-${id}; exec sleep 300`],
  cwd: "/tmp",
  env: { PATH: "/usr/bin:/bin" },
  cols: 80,
  rows: 24,
  scrollback: 100,
});

async function until<T>(what: string, fn: () => T | Promise<T>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const v = await fn();
    if (v) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`Timed out waiting for ${what}`);
}

Deno.test("pane pool: a worker that throws fails alone; its panes exit, reported; others go on", async () => {
  const events: WorkerEvent[] = [];
  const logged: string[] = [];
  const pool = new PanePool(2, (line) => logged.push(line));
  pool.listen((ev) => events.push(ev));
  try {
    await pool.spawn(spawnOpts(1));
    await pool.spawn(spawnOpts(2)); // the least busy worker: the other one
    await until(
      "both panes' output",
      async () =>
        (await pool.read(1, 10, 0)).lines.some((l) => l.includes("pane-1")) &&
        (await pool.read(2, 10, 0)).lines.some((l) => l.includes("pane-2")),
    );

    pool.poison(1);
    await until("pane 1 to exit", () => events.some((e) => e.ev === "exit" && e.id === 1));
    assert.ok(!events.some((e) => e.ev === "exit" && e.id === 2), "pane 2 is unharmed");
    assert.match(logged.join("\n"), /pane worker failed .*its panes end: 1/);
    // Its panes are gone from the pool: a request names why by its code.
    await assert.rejects(
      pool.read(1, 10, 0),
      (e) => e instanceof PaneError && e.code === PaneErrorCode.NoPane,
    );

    const two = await pool.read(2, 10, 0);
    assert.ok(two.lines.some((l) => l.includes("pane-2")));
    // The pool keeps its size: a new pane starts, on the fresh worker or the old one.
    await pool.spawn(spawnOpts(3));
    await until(
      "pane 3's output",
      async () => (await pool.read(3, 10, 0)).lines.some((l) => l.includes("pane-3")),
    );
    assert.equal((await pool.stats()).length, 2);
  } finally {
    for (const id of [2, 3]) await pool.dispose(id).catch(() => {});
    pool.terminate();
  }
});

Deno.test("pane pool: only the workers of watched panes are told they are watched", async () => {
  const pool = new PanePool(2);
  const watched = async () => (await pool.stats()).map((w) => w.watched).join(",");
  try {
    await pool.spawn(spawnOpts(1)); // the first worker
    await pool.spawn(spawnOpts(2)); // the least busy: the second
    assert.equal(await watched(), "false,false");
    const one = pool.watch([1]);
    await until("pane 1's worker watched", async () => await watched() === "true,false");
    const all = pool.watch();
    await until("every worker watched", async () => await watched() === "true,true");
    all();
    all(); // a release counts once
    await until("only pane 1's worker watched again", async () => await watched() === "true,false");
    one();
    await until("nobody watched", async () => await watched() === "false,false");
  } finally {
    for (const id of [1, 2]) await pool.dispose(id).catch(() => {});
    pool.terminate();
  }
});

Deno.test("pane pool: new panes start beside no watched pane; floods are paced only while one has neighbours", async () => {
  const pool = new PanePool(2);
  // Each worker's panes, "p" where it paces the plain-text floods it holds.
  const layout = async () => (await pool.stats()).map((w) => `${w.panes}${w.pacing ? "p" : ""}`).join(",");
  try {
    await pool.spawn(spawnOpts(1)); // the first worker
    const one = pool.watch([1]);
    await pool.spawn(spawnOpts(2));
    await pool.spawn(spawnOpts(3)); // not beside pane 1: both on the second worker
    // Pane 1's worker rests for it; the second worker parses flat out.
    await until("pane 1's worker watched", async () => await layout() === "1p,2");
    const two = pool.watch([2]); // beside pane 3, which nobody watches: every worker paces
    await until("every worker pacing", async () => await layout() === "1p,2p");
    two();
    await until("the second worker flat out again", async () => await layout() === "1p,2");
    one();
    await until("nobody watched", async () => await layout() === "1,2");
    await pool.spawn(spawnOpts(4)); // nothing watched: the worker with the fewest panes
    assert.equal(await layout(), "2,2");
  } finally {
    for (const id of [1, 2, 3, 4]) await pool.dispose(id).catch(() => {});
    pool.terminate();
  }
});

Deno.test("pane pool: a write to a pane whose program exited fails with reason exited, its origin kept", async () => {
  const events: WorkerEvent[] = [];
  const pool = new PanePool(1);
  pool.listen((ev) => events.push(ev));
  try {
    await pool.spawn({ ...spawnOpts(1), args: ["-c", "exit 0"] });
    await until("the program to exit", () => events.some((e) => e.ev === "exit" && e.id === 1));
    const err = await pool.write(1, "late\n").then(() => null, (e) => e);
    assert.ok(err instanceof RpcError, String(err));
    assert.equal(err.data?.reason, ErrorReason.Exited);
    assert.match(err.message, /^Pane 1 exited while being written to$/);
    // The worker's error, rebuilt with its code, and under it where the worker threw it.
    assert.ok(err.cause instanceof PaneError);
    assert.equal(err.cause.code, PaneErrorCode.Exited);
    assert.match(
      (err.cause.cause as Error).stack ?? "",
      /^in the pane worker: PaneError: .*\n\s+at .*ops\.ts/,
    );
    // A pane the worker never had: code no_pane, from the worker.
    await assert.rejects(
      pool.read(99, 10, 0),
      (e) => e instanceof PaneError && e.code === PaneErrorCode.NoPane,
    );
  } finally {
    await pool.dispose(1).catch(() => {});
    pool.terminate();
  }
});
