/**
 * Waiting on a queue folder from outside the host (`paneflow msg wait`, a
 * flow's `message` step): check, and check again whenever something under
 * `<root>/queue` changes, with a poll every second as the backstop for a
 * change the watcher missed. Loads no npm package.
 *
 * ```ts
 * const done = await untilQueue(root, async () => (await find(id)).finished ? it : null, { deadline });
 * ```
 *
 * @module
 */
import { later } from "../client/timer.ts";

/** The backstop: a check at least this often, whatever the watcher says. */
const POLL_MS = 1000;

/** Options of {@link untilQueue}. */
export interface UntilQueueOptions {
  /** Give up at this time (`Date.now()` ms); default never. */
  deadline?: number;
  /** Give up when this aborts. */
  signal?: AbortSignal;
}

/**
 * Resolves with the first value `check` returns that is not null, or with
 * null once the deadline has passed or the signal aborted. The first check
 * runs before the folder is watched, so a `check` that throws (no such
 * message) fails before anything is opened.
 */
export async function untilQueue<T>(
  root: string,
  check: () => Promise<T | null>,
  opts: UntilQueueOptions = {},
): Promise<T | null> {
  const deadline = opts.deadline ?? Infinity;
  let watcher: Deno.FsWatcher | null = null;
  let wake = () => {};
  const close = () => {
    try {
      watcher?.close();
    } catch { /* closed */ }
  };
  const onAbort = () => {
    close();
    wake();
  };
  opts.signal?.addEventListener("abort", onAbort);
  try {
    while (!opts.signal?.aborted) {
      const found = await check();
      if (found !== null) return found;
      if (!watcher) {
        // Watched from now on; checked once more at once for a change made before the watch began.
        const w = watcher = Deno.watchFs(`${root}/queue`);
        (async () => {
          try {
            for await (const _ of w) wake();
          } catch { /* closed */ }
        })();
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) return null;
      await new Promise<void>((resolve) => {
        if (opts.signal?.aborted) return resolve();
        const cancel = later(Math.min(left, POLL_MS), resolve);
        wake = () => {
          cancel();
          resolve();
        };
      });
    }
    return null;
  } finally {
    opts.signal?.removeEventListener("abort", onAbort);
    close();
  }
}
