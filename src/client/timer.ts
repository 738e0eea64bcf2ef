/**
 * Timers for the light CLI. Deno 2.9's global `setTimeout` is Node's: its
 * first call loads the Node compatibility layer (timers, async_hooks,
 * errors, util, inspect: ~7 ms of CPU, a fifth of a one-shot `paneflow
 * read`; bench/oneshot.ts). `AbortSignal.timeout` is the web platform's own
 * timer, and holds the process open only while something listens to it, so
 * a cancelled timer lets a verb end at once.
 *
 * ```ts
 * const cancel = later(5000, () => conn.close());
 * await sleep(25);
 * cancel();
 * ```
 *
 * @module
 */

/** Runs `fn` after `ms` unless the returned function is called first. */
export function later(ms: number, fn: () => void): () => void {
  const signal = AbortSignal.timeout(Math.max(0, Math.ceil(ms)));
  const fire = () => fn();
  signal.addEventListener("abort", fire, { once: true });
  return () => signal.removeEventListener("abort", fire);
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => later(ms, resolve));
}
