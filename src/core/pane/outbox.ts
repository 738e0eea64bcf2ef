/**
 * The pane worker's outgoing messages: events batched per event-loop turn,
 * replies sent after the events that happened before them.
 *
 * @module
 */
import type { WorkerBatch, WorkerEvent, WorkerReply } from "./worker_api.ts";

/** The worker's global scope (the default lib types `self` as a window). */
const scope = self as unknown as { postMessage(msg: unknown, transfer?: Transferable[]): void };

/**
 * Events wait here until the end of the event loop's turn and then go as one
 * message: under fan-out every `postMessage` wakes the main thread, and on a
 * loaded machine each wake-up can cost the worker its core (profiled: 7–29 %
 * of a worker's time in `op_worker_post_message_raw` with one message per
 * event). A pane's newest title replaces its older ones in the batch.
 */
let outbox: WorkerEvent[] = [];
const titles = new Map<number, string>();
let outboxScheduled = false;

export function emit(ev: WorkerEvent) {
  if (ev.ev === "title") titles.set(ev.id, ev.title);
  else outbox.push(ev);
  if (outboxScheduled) return;
  outboxScheduled = true;
  setImmediate(flushOutbox);
}

export function flushOutbox() {
  outboxScheduled = false;
  for (const [id, title] of titles) outbox.unshift({ ev: "title", id, title });
  titles.clear();
  if (outbox.length === 1) scope.postMessage(outbox[0]);
  else if (outbox.length) scope.postMessage(outbox satisfies WorkerBatch);
  outbox = [];
}

/** Sends a reply, after the events that happened before it (`transfer`: buffers moved, not copied). */
export function post(msg: WorkerReply, transfer: Transferable[] = []) {
  flushOutbox();
  scope.postMessage(msg, transfer);
}
