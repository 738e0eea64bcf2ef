/**
 * A Worker that measures output → `surface_changed` latency on a stamp pane
 * (bench/_stamp.ts) until told to stop, on its own thread so the bench's
 * main loop cannot delay the arrival times: it sends a token line, notes
 * when the pane's next `surface_changed` frame arrives, reads the stamp the
 * pane printed, and records arrival − stamp.
 *
 * Messages in: `{socket, surfaceId}` to start, `"stop"` to stop.
 * Message out: `{started: true}`, then `{samples: number[]}` (ms) once stopped.
 *
 * @module
 */
import { RpcConn, subscribe } from "../tests/_stream.ts";
import { waitUntil } from "../tests/_harness.ts";

const scope = self as unknown as {
  postMessage(msg: unknown): void;
  onmessage: ((e: MessageEvent) => void) | null;
};

let stopping = false;

/** The stamp printed after `token`, from the newest lines of a screen. */
function stampOf(text: string, token: string): number | null {
  for (const line of text.split("\n").reverse()) {
    const m = line.match(/^(\S+) (\d+\.\d+)\s*$/);
    if (m && m[1] === token) return Number(m[2]);
  }
  return null;
}

scope.onmessage = async (e: MessageEvent) => {
  if (e.data === "stop") {
    stopping = true;
    return;
  }
  const { socket, surfaceId } = e.data as { socket: string; surfaceId: number };
  const rpc = await RpcConn.open(socket);
  const events = await subscribe(socket, { surfaces: [surfaceId], types: ["surface_changed"] });
  const read = async () =>
    (await rpc.call("surface.read", { surface_id: surfaceId, lines: 5, fenced: false }))
      .text;
  const samples: number[] = [];
  let failure: string | undefined;
  scope.postMessage({ started: true });
  try {
    await loop(samples);
  } catch (e) {
    failure = String(e);
  }
  await events.close();
  rpc.close();
  scope.postMessage({ samples, failure });

  async function loop(samples: number[]) {
    for (let i = 0; !stopping; i++) {
      const token = `p${i}`;
      const from = events.frames.length;
      await rpc.call("surface.send_text", { surface_id: surfaceId, text: `${token}\r` });
      // The first frame after the send whose screen shows the stamp (an echo may come first).
      let stamp: number | null = null;
      let seen = from;
      await waitUntil(`the frame for ${token}`, async () => {
        while (seen < events.frames.length) {
          const at = events.times[seen++];
          const s = stampOf(await read(), token);
          if (s !== null) {
            stamp = s;
            samples.push(performance.timeOrigin + at - s);
            return true;
          }
        }
        return stopping;
      }, { timeoutMs: 120_000, intervalMs: 1 });
      if (stamp === null) break;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
};
