/**
 * A flow's `message` step: append a message to the queue and wait (on the
 * queue directory's events, with a slow poll as a backstop: ./queue_watch.ts)
 * until it is completed or failed.
 *
 * @module
 */
import { appendMessage, ensureRoot, type Message, newId, queueFile, readQueue } from "./store.ts";
import { untilQueue } from "./queue_watch.ts";

/** How the message ended. */
export interface MessageOutcome {
  id: string;
  status: "completed" | "failed";
  result: string;
  reason: string;
}

/** Sends the message and resolves when it has finished (or rejects when `signal` aborts). */
export async function sendAndWait(
  root: string,
  m: { to: string; content: string; from: string; type: Message["type"] },
  signal: AbortSignal,
  onSent: (id: string) => void,
): Promise<MessageOutcome> {
  const id = newId();
  await ensureRoot(root);
  await appendMessage(root, {
    id,
    from: m.from,
    to: m.to,
    type: m.type,
    status: "pending",
    content: m.content,
    timestamp: new Date().toISOString(),
    metadata: {},
  });
  onSent(id);
  const file = queueFile(root, m.from, m.to);
  const done = await untilQueue(root, async (): Promise<MessageOutcome | null> => {
    const found = (await readQueue(file)).messages.find((x) => x.msg.id === id)?.msg;
    if (found?.status !== "completed" && found?.status !== "failed") return null;
    return {
      id,
      status: found.status,
      result: String(found.metadata.result ?? ""),
      reason: String(found.metadata.reason ?? ""),
    };
  }, { signal });
  if (!done) throw new Error("interrupted");
  return done;
}
