/**
 * Pane worker: owns PTYs and their headless terminals, off the socket's
 * thread. node-pty reads on the main thread starve the event loop (20 busy
 * panes gave `system.ping` p99 1.3 s); here they only slow each other.
 *
 * This module is the worker's message loop only: the main thread sends
 * {@link WorkerRequest} messages (./protocol.ts, typed per op), ./ops.ts
 * answers each op, and replies and events go back through ./outbox.ts. The
 * panes themselves (PTY, terminal, parsing and flow control) are
 * ./panes.ts's; the PTY drain guard ./drain.ts's; xterm's private fields
 * ./terminal.ts's.
 *
 * @module
 */
import type { RecycleMessage, SpawnerMessage, WatchedMessage, WorkerRequest } from "./worker_api.ts";
import { post } from "./outbox.ts";
import { remember } from "./views.ts";
import { handle } from "./ops.ts";
import { panes, parseHeld, requestTaken, setWatched, useSpawner } from "./panes.ts";
import { transferOf } from "../../wire/raw_json.ts";
import { rawBuffers } from "../session/snapshot.ts";
import { startWait } from "../session/engine.ts";
import { releaser } from "./release.ts";
import { toFailure } from "./errors.ts";

// The garbage of requests counts toward the next trim as output does (./release.ts).
releaser.watchExternal();

/**
 * A `session.wait`: its reply is posted from the check that decides it,
 * not at the end of a promise chain (./ops.ts's `handle`).
 */
function waitFor(req: Extract<WorkerRequest, { op: "session" }>): void {
  const call = req.call as Extract<typeof req.call, { kind: "wait" }>;
  try {
    startWait(req.id, call, (result) => post({ rid: req.rid, ok: true, result }, transferOf(result)));
  } catch (err) {
    post({ rid: req.rid, ok: false, error: toFailure(err) });
  }
}

/** Ops on a pane that do not look at its screen: they leave a flood's held output held. */
const BLIND_OPS = new Set<WorkerRequest["op"]>(["write", "kill", "dispose"]);

/** The worker's global scope (the default lib types `self` as a window). */
const scope = self as unknown as {
  onmessage: ((e: MessageEvent<Message>) => void) | null;
};
type Message = WorkerRequest | RecycleMessage | WatchedMessage | SpawnerMessage;

scope.onmessage = async (e: MessageEvent<Message>) => {
  if (e.data && "recycle" in e.data) return rawBuffers.give(e.data.recycle);
  if (e.data && "spawner" in e.data) return useSpawner(e.data.spawner);
  if (e.data && "watched" in e.data) return setWatched(e.data.watched, e.data.requests, e.data.mixedWatched);
  const req = e.data;
  requestTaken();
  // A request on a pane sees every byte read from it so far (./panes.ts holds a flood's output).
  if ("id" in req && !BLIND_OPS.has(req.op)) {
    const pane = panes.get(req.id);
    if (pane) parseHeld(pane);
  }
  if (req.op === "session" && req.call.kind === "wait") return waitFor(req);
  try {
    const result = await handle(req);
    post({ rid: req.rid, ok: true, result }, req.op === "session" ? transferOf(result) : []);
    // The snapshot for a later `read --since` is taken after the reply has
    // gone (the reader does not wait for the hashing) but in the same task,
    // so no output can be parsed in between: it is exactly the state read.
    if (req.op === "read") {
      const pane = panes.get(req.id);
      if (pane) remember(pane);
    }
  } catch (err) {
    post({ rid: req.rid, ok: false, error: toFailure(err) });
  }
};
