/**
 * Giving memory back to the system after output floods.
 *
 * A pane's terminal lives in `ArrayBuffer`s that V8 allocates with malloc, in
 * the worker thread's own glibc arena: every row xterm makes (a full-screen
 * TUI makes a whole screen of them each time it enters the alternate screen)
 * and every chunk read from a PTY. After a flood the garbage collector frees
 * them, but glibc keeps the freed pages in the arena, and the host's RSS
 * stays at its peak: 20 panes replaying a Claude Code session left 36–66 MiB
 * of freed memory in the workers' arenas (`bench/corpus.ts`, claude, where
 * tmux grows by 0.7 MiB a pane). `malloc_trim(0)` hands the free pages of
 * every arena back (`MADV_DONTNEED`); it costs about 1 ms with little to give
 * back and up to 30 ms after a flood, on this worker's thread only.
 *
 * So a worker trims once it has parsed {@link DEBT_BYTES} (or closed panes
 * worth as much) since its last trim and has then been quiet for
 * {@link QUIET_MS}, or at the latest {@link MAX_DELAY_MS} after the debt
 * came due (a worker that never goes quiet still trims: freed pages pile up
 * in its arena through hours of steady output), {@link WATCHED_MAX_DELAY_MS}
 * while a client watches or waits on output. Linux with glibc only:
 * elsewhere (macOS, musl) it does nothing.
 *
 * Output is not the only garbage: every request a worker answers leaves
 * some (typed input, replies; most of it was the ~2 KB array of row hashes
 * a `read` of a changed pane kept for `read --since`, which ./screen.ts now
 * hashes into the array of the snapshot it drops). A worker of idle shells
 * that clients type into and read parses little output, so its debt hardly
 * grew, while V8, whose heap grew slowly, left a major collection for later
 * and the `ArrayBuffer`s' memory piled up in the arena: in the soak, the
 * worker of the idle shells grew 0.65 MiB a minute, all of it collectable
 * (40 shells typed into and read 120 times a second: +9 MiB of `external`
 * in 60 s, flat when collected every 15 s). So the worker also counts what
 * its `ArrayBuffer`s have grown by since its last trim
 * ({@link Releaser.watchExternal}, every {@link EXTERNAL_EVERY_MS}).
 *
 * @module
 */

/** Output parsed (bytes) after which freed memory is worth handing back. */
export const DEBT_BYTES = 4 << 20;
/** What a closed pane counts toward {@link DEBT_BYTES}: its terminal's rows and buffers. */
const PANE_DEBT = 1 << 20;
/** How long the worker must have parsed nothing before it trims. */
const QUIET_MS = 200;
/** The longest a due trim waits for quiet. */
export const MAX_DELAY_MS = 2000;
/**
 * The same while a client watches or waits on output. A trim walks every
 * arena of the process, the main thread's too, and hands pages back with
 * `madvise`: for its 1–30 ms the main thread's own allocations may wait on
 * it. Every 10 s per worker that put `system.ping` p99 over 5 ms in most
 * minutes of the soak (5 of its first 7; 0 of 30 without trims); once a
 * minute leaves fewer slow pings than the 1 % a p99 allows.
 */
export const WATCHED_MAX_DELAY_MS = 60_000;

/** How often a worker compares its `ArrayBuffer` memory with what it was after its last trim. */
export const EXTERNAL_EVERY_MS = 5_000;

type Trim = () => void;

let trimFn: Trim | null | undefined;
/** glibc's `malloc_trim(0)`, or null where there is none. */
function libcTrim(): Trim | null {
  if (trimFn !== undefined) return trimFn;
  trimFn = null;
  if (Deno.build.os !== "linux") return null;
  try {
    const lib = Deno.dlopen("libc.so.6", { malloc_trim: { parameters: ["usize"], result: "i32" } });
    trimFn = () => lib.symbols.malloc_trim(0n);
  } catch { /* no glibc, or no FFI permission */ }
  return trimFn;
}

/** V8's `gc()` where the host runs with `--expose-gc` (../../paths.ts's `HOST_V8_FLAGS`). */
const gc = (globalThis as { gc?: (opts?: { type: string; execution: string; flavor: string }) => void }).gc;
/**
 * A full collection; `thorough`: one that also hands V8's emptied pages back
 * (a plain `gc()` keeps them pooled for reuse, and the process's RSS with
 * them: an isolate that held 46 MiB of garbage, 76 MiB RSS after `gc()`,
 * 39 MiB after this). That one collects again and again and compacts: 100–190
 * ms for a worker of 50 panes with their history full, with V8's helper
 * threads at the host's priority, which put the soak's `system.ping` p99 at
 * 6–12 ms in the minutes it ran; a plain one is enough to free `ArrayBuffer`s.
 */
const collect = gc &&
  ((thorough: boolean) =>
    gc({ type: "major", execution: "sync", flavor: thorough ? "last-resort" : "regular" }));

/** The trim policy of one worker (a class so its tests can drive it with their own trim). */
export class Releaser {
  #debt = 0;
  #lastChurn = 0;
  #dueAt = 0;
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** V8's external memory (`ArrayBuffer`s) after the last trim, and its reader, once watched. */
  #externalBase = 0;
  #external: (() => number) | null = null;
  #externalTimer: ReturnType<typeof setInterval> | null = null;
  /** The debt is (also) external memory V8 left uncollected, and output parsed since the last trim. */
  #externalOwed = false;
  #parsed = 0;
  /** Trims done, and the time they took (ms): `system.stats`. */
  trims = 0;
  trimMs = 0;
  /**
   * The longest a due trim waits for quiet, now: {@link MAX_DELAY_MS}, or
   * {@link WATCHED_MAX_DELAY_MS} while a client watches or waits on output
   * (the worker sets it).
   */
  maxDelay: () => number = () => MAX_DELAY_MS;

  /**
   * `clock` is `performance.now()` and `collectNow` V8's full collection
   * (the tests' own make a worker busy or quiet at will, and count).
   */
  constructor(
    readonly trim: Trim | null,
    readonly clock: () => number = () => performance.now(),
    readonly collectNow: ((thorough: boolean) => void) | undefined = collect,
  ) {}

  /** `bytes` of output parsed at `now` (by {@link Releaser.clock}). */
  churn(bytes: number, now: number): void {
    if (this.trim === null) return;
    this.#lastChurn = now;
    this.#parsed += bytes;
    this.#owe(bytes, now);
  }

  /** A pane closed at `now`: its terminal's rows and buffers ({@link PANE_DEBT}) are garbage. */
  closedPane(now: number): void {
    if (this.trim === null) return;
    this.#lastChurn = now;
    this.#owe(PANE_DEBT, now);
  }

  /**
   * Counts growth of V8's external memory (`external`, by default
   * `Deno.memoryUsage().external`) since the last trim into the debt, every
   * `everyMs` (a timer that keeps no one alive). Growth counts from the
   * lowest it has been since (V8 collects on its own too).
   */
  watchExternal(
    external: () => number = () => Deno.memoryUsage().external,
    everyMs: number = EXTERNAL_EVERY_MS,
  ): void {
    if (this.trim === null || this.#externalTimer !== null) return;
    this.#external = external;
    this.#externalBase = external();
    this.#externalTimer = setInterval(() => {
      const now = external();
      if (now < this.#externalBase) this.#externalBase = now;
      if (now - this.#externalBase < DEBT_BYTES) return;
      this.#externalOwed = true;
      this.#owe(now - this.#externalBase, this.clock());
      this.#externalBase = now;
    }, everyMs);
    Deno.unrefTimer(this.#externalTimer);
  }

  #owe(bytes: number, now: number): void {
    this.#debt += bytes;
    if (this.#debt < DEBT_BYTES || this.#timer !== null) return;
    this.#dueAt = now;
    this.#timer = setTimeout(this.#check, QUIET_MS);
  }

  #check = () => {
    const now = this.clock();
    const quiet = now - this.#lastChurn;
    if (quiet < QUIET_MS && now - this.#dueAt < this.maxDelay()) {
      this.#timer = setTimeout(this.#check, QUIET_MS - quiet);
      return;
    }
    this.#timer = null;
    this.#debt = 0;
    // The flood's rows and chunks are garbage V8 has not collected yet; only once it has are
    // they free for malloc to hand back. A thorough collection stops the worker for 10–50 ms and
    // more: only when it is quiet, not in the middle of a flood (V8 collects there anyway). When
    // V8 has left `ArrayBuffer`s to pile up while little output came (the idle worker above), a
    // plain collection frees them, quiet or not.
    if (this.#externalOwed && this.#parsed < DEBT_BYTES) this.collectNow?.(false);
    else if (quiet >= QUIET_MS) this.collectNow?.(true);
    this.#externalOwed = false;
    this.#parsed = 0;
    this.trim!();
    if (this.#external) this.#externalBase = this.#external();
    this.trims++;
    this.trimMs += this.clock() - now;
  };

  /** Stops a pending trim (a worker's tests end with no timer left). */
  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    if (this.#externalTimer !== null) clearInterval(this.#externalTimer);
    this.#timer = this.#externalTimer = null;
  }
}

/**
 * A releaser that waits for quiet however long that takes (the main
 * thread's: it serves every client, so it collects only when none is busy).
 */
export function quietReleaser(): Releaser {
  const r = new Releaser(libcTrim());
  r.maxDelay = () => Infinity;
  return r;
}

/** This worker's releaser. */
export const releaser: Releaser = new Releaser(libcTrim());
