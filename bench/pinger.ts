/**
 * A Worker that sends `system.ping` every `intervalMs` over one persistent
 * connection and records round trips, on its own thread so the bench's
 * main loop cannot delay it.
 *
 * Messages in: `{socket, intervalMs}` to start, `"take"` for the round trips
 * so far (it goes on), `"stop"` to stop.
 * Messages out: `{started: true}`, then `{samples: number[]}` (milliseconds)
 * for each `"take"` and once stopped.
 *
 * @module
 */
import { RpcConn } from "../tests/_stream.ts";

const scope = self as unknown as {
  postMessage(msg: unknown): void;
  onmessage: ((e: MessageEvent) => void) | null;
};

let stopping = false;
let samples: number[] = [];

scope.onmessage = async (e: MessageEvent) => {
  if (e.data === "stop") {
    stopping = true;
    return;
  }
  if (e.data === "take") {
    scope.postMessage({ samples });
    samples = [];
    return;
  }
  const { socket, intervalMs } = e.data as { socket: string; intervalMs: number };
  const rpc = await RpcConn.open(socket);
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
