/**
 * A Worker that sends `system.ping` every `intervalMs` over one persistent
 * connection and records round trips, on its own thread so the bench's
 * main loop cannot delay it.
 *
 * Messages in: `{socket, intervalMs}` to start, `"stop"` to stop.
 * Message out: `{samples: number[]}` (milliseconds), once stopped.
 *
 * @module
 */
import { RpcConn } from "../tests/_stream.ts";

const scope = self as unknown as {
  postMessage(msg: unknown): void;
  onmessage: ((e: MessageEvent) => void) | null;
};

let stopping = false;

scope.onmessage = async (e: MessageEvent) => {
  if (e.data === "stop") {
    stopping = true;
    return;
  }
  const { socket, intervalMs } = e.data as { socket: string; intervalMs: number };
  const rpc = await RpcConn.open(socket);
  const samples: number[] = [];
  scope.postMessage({ started: true });
  let next = performance.now();
  while (!stopping) {
    const t0 = performance.now();
    await rpc.call("system.ping");
    samples.push(performance.now() - t0);
    next += intervalMs;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    else next = performance.now();
  }
  rpc.close();
  scope.postMessage({ samples });
};
