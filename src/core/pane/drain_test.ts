import assert from "node:assert/strict";
import { type DrainState, guardDrainOnExit, scheduleDeferredDestroy } from "./drain.ts";

/** A pane whose program exited 3 s ago (past the drain's 2 s limit) with a destroy waiting. */
function exitedPane(destroyed: { at: number | null }): DrainState {
  const now = performance.now();
  const pane: DrainState = {
    pty: {} as DrainState["pty"],
    input: {} as DrainState["input"],
    pending: 0,
    paused: false,
    throttled: false,
    parseNow: () => {},
    deferredDestroy: null,
    drainTimer: null,
    lastDataAt: now - 1000,
    resumedAt: 0,
    destroyAskedAt: now - 3000,
    reaped: true,
    disposed: false,
  };
  pane.deferredDestroy = () => void (destroyed.at = performance.now());
  return pane;
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("drain: a socket still delivering long after its program exited is destroyed at once", async () => {
  const destroyed = { at: null as number | null };
  const pane = exitedPane(destroyed);
  pane.lastDataAt = performance.now(); // it delivered just now, and was not paused since
  scheduleDeferredDestroy(pane);
  await tick(50);
  assert.notEqual(destroyed.at, null);
});

Deno.test("drain: a flood resumed after its program exited is read before its socket is destroyed", async () => {
  // Paused for a turn's budget past the exit, then resumed: what the kernel holds for it comes in
  // the next poll, after this turn's timers. Destroying it from a timer before that lost the tail.
  const destroyed = { at: null as number | null };
  const pane = exitedPane(destroyed);
  pane.resumedAt = performance.now(); // resumed now; nothing read since
  scheduleDeferredDestroy(pane);
  await tick(50);
  assert.equal(destroyed.at, null, "not destroyed before the resumed socket was read");
  pane.lastDataAt = performance.now(); // the poll read its output
  scheduleDeferredDestroy(pane);
  await tick(50);
  assert.notEqual(destroyed.at, null, "destroyed once it was read");
  if (pane.drainTimer !== null) clearTimeout(pane.drainTimer);
});

Deno.test("drain: the close asked for after the exit waits for a resumed flood's next read", async () => {
  // The PTY asks to close its master 200 ms after the exit; the pane had been paused longer than
  // that and was just resumed: its output is still in the kernel, read in the next poll.
  const destroyed = { at: null as number | null };
  let onData = () => {};
  const socket = { destroy: () => void (destroyed.at = performance.now()) };
  const pane = exitedPane({ at: null });
  pane.deferredDestroy = null;
  pane.destroyAskedAt = 0;
  pane.pty = {
    _socket: socket,
    onData: (fn: () => void) => void (onData = fn),
  } as unknown as DrainState["pty"];
  pane.input = { close: () => {} } as DrainState["input"];
  pane.resumedAt = performance.now();
  guardDrainOnExit(pane);
  socket.destroy();
  assert.equal(destroyed.at, null, "not destroyed before the resumed socket was read");
  pane.lastDataAt = performance.now(); // the poll read its output
  onData();
  const deadline = Date.now() + 5000;
  while (destroyed.at === null && Date.now() < deadline) await tick(20);
  assert.notEqual(destroyed.at, null, "destroyed once it was read and went quiet");
});
