/**
 * Delivery to one sink, off the host's path: a bounded queue, one delivery
 * at a time, retries with backoff, a rate limit per minute, and one log line
 * per outage (and one when the sink is back). Every attempt is bounded by
 * the sink's `timeout_ms` (fetch with an AbortSignal, a killed command), so
 * a hung endpoint costs a pending promise, never the event loop.
 *
 * @module
 */
import type { NotifySink } from "../spec/notify.ts";
import { type NotifyBody, ntfyBody, slackBody, textOf, titleOf } from "./body.ts";

/** Notifications waiting per sink at most; the oldest goes when one more comes. */
export const SINK_QUEUE_LIMIT = 100;
/** The longest wait between two attempts. */
export const MAX_BACKOFF_MS = 60_000;

/** A notification on its way. */
export interface Pending {
  body: NotifyBody;
  /** Called once with the outcome. */
  done(outcome: { ok: true; attempts: number } | { ok: false; attempts: number; error: string }): void;
}

/** Sends one body to a sink once; throws a one-line error. */
export async function sendOnce(sink: NotifySink, body: NotifyBody, stop?: AbortSignal): Promise<void> {
  const timeout = AbortSignal.timeout(sink.timeout_ms);
  const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
  switch (sink.type) {
    case "webhook":
      return await post(sink.url, body, { ...sink.headers }, signal);
    case "slack":
      return await post(sink.url, slackBody(body), {}, signal);
    case "ntfy": {
      const { url, body: json } = ntfyBody(body, sink.url);
      return await post(url, json, sink.token ? { authorization: `Bearer ${sink.token}` } : {}, signal);
    }
    case "command":
      return await run(["sh", "-c", sink.command], JSON.stringify(body) + "\n", signal);
    case "desktop":
      return await run(["notify-send", "--app-name=paneflow", titleOf(body), textOf(body)], "", signal);
  }
}

async function post(url: string, json: unknown, headers: Record<string, string>, signal: AbortSignal) {
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(json),
      signal,
    });
  } catch (e) {
    const err = e as Error;
    if (err.name === "TimeoutError") throw new Error("timed out");
    // Deno's "fetch failed" says why in its cause (connection refused, DNS, TLS).
    const why = err.cause instanceof Error ? `${err.message}: ${err.cause.message}` : err.message;
    throw new Error(why.split("\n")[0].slice(0, 300));
  }
  await res.body?.cancel();
  if (!res.ok) throw new Error(`HTTP ${res.status}`);
}

async function run(argv: string[], stdin: string, signal: AbortSignal) {
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(argv[0], {
      args: argv.slice(1),
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
      signal,
    }).spawn();
  } catch (e) {
    throw new Error(
      e instanceof Deno.errors.NotFound
        ? `"${argv[0]}" is not installed`
        : (e as Error).message.split("\n")[0],
    );
  }
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(stdin)).catch(() => {});
  await writer.close().catch(() => {});
  const out = await child.output().catch(() => null);
  if (signal.aborted) throw new Error("timed out");
  if (!out?.success) {
    const said = out ? new TextDecoder().decode(out.stderr).trim().split("\n").at(-1) : "";
    throw new Error(`exited with code ${out?.code ?? "?"}${said ? `: ${said.slice(0, 200)}` : ""}`);
  }
}

/** What `notify ls` shows of a sink. */
export interface SinkStats {
  sent: number;
  failed: number;
  dropped: number;
  queued: number;
  last_sent: number | null;
  last_error: string | null;
  last_error_at: number | null;
  down: boolean;
}

/** One sink's queue and its delivery loop. */
export class SinkQueue {
  #queue: Pending[] = [];
  #running = false;
  #closed = false;
  #sentAt: number[] = [];
  #wake: (() => void) | null = null;
  #stop = new AbortController();
  readonly stats: SinkStats = {
    sent: 0,
    failed: 0,
    dropped: 0,
    queued: 0,
    last_sent: null,
    last_error: null,
    last_error_at: null,
    down: false,
  };

  constructor(
    readonly name: string,
    readonly sink: NotifySink,
    private readonly _log: (line: string) => void,
    private readonly _send: (sink: NotifySink, body: NotifyBody, stop?: AbortSignal) => Promise<void> =
      sendOnce,
  ) {}

  /** Queues a notification; never waits. Over the rate limit it fails at once. */
  push(p: Pending): void {
    if (this.#closed) return p.done({ ok: false, attempts: 0, error: "the host is stopping" });
    const now = Date.now();
    this.#sentAt = this.#sentAt.filter((t) => now - t < 60_000);
    if (this.#sentAt.length >= this.sink.rate_per_min) {
      this.stats.dropped++;
      return p.done({
        ok: false,
        attempts: 0,
        error: `rate limit of ${this.sink.rate_per_min} a minute reached`,
      });
    }
    this.#sentAt.push(now);
    if (this.#queue.length >= SINK_QUEUE_LIMIT) {
      this.stats.dropped++;
      this.#queue.shift()!.done({ ok: false, attempts: 0, error: "dropped: the sink's queue is full" });
    }
    this.#queue.push(p);
    this.stats.queued = this.#queue.length;
    if (!this.#running) void this.#loop();
  }

  async #loop() {
    this.#running = true;
    try {
      while (!this.#closed) {
        const p = this.#queue.shift();
        this.stats.queued = this.#queue.length;
        if (!p) break;
        await this.#deliver(p);
      }
    } finally {
      this.#running = false;
    }
  }

  async #deliver(p: Pending) {
    let error = "";
    for (let attempt = 1; attempt <= 1 + this.sink.retries; attempt++) {
      if (attempt > 1 && !(await this.#pause(Math.min(MAX_BACKOFF_MS, 1000 * 2 ** (attempt - 2))))) break;
      try {
        await this._send(this.sink, p.body, this.#stop.signal);
        if (this.stats.down) this._log(`notify: sink "${this.name}" is reachable again`);
        Object.assign(this.stats, { down: false, last_sent: Date.now() });
        this.stats.sent++;
        return p.done({ ok: true, attempts: attempt });
      } catch (e) {
        error = (e as Error).message;
        Object.assign(this.stats, { last_error: error, last_error_at: Date.now() });
        if (!this.stats.down) {
          this._log(
            `notify: sink "${this.name}" failed: ${error}; retrying with backoff (logged once until it is back)`,
          );
          this.stats.down = true;
        }
      }
    }
    this.stats.failed++;
    p.done({ ok: false, attempts: 1 + this.sink.retries, error });
  }

  /** Waits `ms` unless closed meanwhile; whether to go on. */
  #pause(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = null;
        resolve(!this.#closed);
      }, ms);
      this.#wake = () => {
        clearTimeout(timer);
        resolve(false);
      };
    });
  }

  /** Stops: what waits fails, a pending retry ends and an attempt in flight is aborted. */
  close(): void {
    this.#closed = true;
    this.#wake?.();
    this.#stop.abort();
    for (const p of this.#queue.splice(0)) p.done({ ok: false, attempts: 0, error: "the host is stopping" });
  }
}
