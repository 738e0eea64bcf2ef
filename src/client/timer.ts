/**
 * Timers for the light CLI. Deno 2.9's global `setTimeout` is Node's: its
 * first call loads the Node compatibility layer (timers, async_hooks,
 * errors, util, inspect: ~7 ms of CPU, a fifth of a one-shot `paneflow
 * read`; bench/oneshot.ts). `AbortSignal.timeout` is the web platform's own
 * timer, and holds the process open only while something listens to it, so
 * a cancelled timer lets a verb end at once. Its first use still costs ~1.4
 * ms (the signal, then EventTarget's first listener), so the deadlines of a
 * call, which always run beside a pending socket operation, use
 * {@link deadline}: V8's `Atomics.waitAsync`, ~0.1 ms.
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

/**
 * Runs `fn` after `ms` unless the returned function is called first, like
 * {@link later}, for a deadline on an operation that is pending meanwhile (a
 * connect, a read): the timer itself does not keep the process running, so
 * it fires only while something else does (V8's `Atomics.waitAsync` on a cell
 * nobody writes; cancelling wakes it).
 */
export function deadline(ms: number, fn: () => void): () => void {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const wait = Atomics.waitAsync(cell, 0, 0, Math.max(0, Math.ceil(ms)));
  let live = true;
  void Promise.resolve(wait.value).then(() => {
    if (live) {
      live = false;
      fn();
    }
  });
  return () => {
    if (!live) return;
    live = false;
    Atomics.notify(cell, 0);
  };
}

/** Resolves after `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => later(ms, resolve));
}
