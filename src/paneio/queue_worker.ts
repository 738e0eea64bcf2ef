/**
 * The queue worker: one per host with a queue root. It keeps the queue's
 * files (./queue_files.ts) so that reading, parsing and fsyncing them never
 * holds the host's event loop; the host's queue service (./deliver.ts)
 * decides what to deliver and asks it for each status change.
 *
 * @module
 */
import { type FromWorker, QueueFiles, type ToWorker } from "./queue_files.ts";

/** The worker's global scope (the default lib types `self` as a window). */
const scope = self as unknown as {
  postMessage(msg: FromWorker): void;
  onmessage: ((e: MessageEvent<ToWorker>) => void) | null;
  close(): void;
};

let files: QueueFiles | null = null;
const post = (m: FromWorker) => scope.postMessage(m);

scope.onmessage = (e: MessageEvent<ToWorker>) => {
  const m = e.data;
  switch (m.t) {
    case "start":
      files = new QueueFiles(m.root, post);
      files.start().then(
        () => post({ t: "started", error: null }),
        (err) => post({ t: "started", error: (err as Error).message }),
      );
      break;
    case "update":
      if (!files) return post({ t: "reply", seq: m.seq, msg: null, error: "the queue is not started" });
      files.update(m).then(
        (msg) => post({ t: "reply", seq: m.seq, msg, error: null }),
        (err) => post({ t: "reply", seq: m.seq, msg: null, error: (err as Error).message }),
      );
      break;
    case "status":
      void files?.writeStatus(m.name, m.status);
      break;
    case "rescan":
      files?.rescan();
      break;
    case "stop":
      files?.stop();
      scope.close();
      break;
  }
};
