/**
 * One client connection as handlers see it: a serialized writer (responses
 * and server-originated notifications never interleave), whether a request
 * is being handled (notifications wait for its response), per-family state,
 * hooks run after each response, and cleanup when the peer leaves.
 *
 * (The layout issue's per-connection object maps onto this: a handler gets
 * `(ctx, params, conn)`.)
 *
 * @module
 */

let nextId = 1;

/** A connection. */
export class Conn {
  readonly id = nextId++;
  /** State kept per connection by a method family (e.g. "ptywright" notifications). */
  readonly state = new Map<string, unknown>();
  /** A request is being handled: pushes wait for its response. */
  busy = false;
  /** Exempt from the idle read deadline (a ptywright client sits quietly between calls). */
  keepAlive = false;
  closed = false;
  #queue: Promise<void> = Promise.resolve();
  #after = new Set<() => Promise<void> | void>();
  #closers = new Set<() => void>();

  constructor(private readonly _write: (msg: unknown) => Promise<void>) {}

  /** Writes one message after every message queued before it. */
  send(msg: unknown): Promise<void> {
    const next = this.#queue.then(() => (this.closed ? undefined : this._write(msg)));
    this.#queue = next.catch(() => {});
    return next;
  }

  /** Runs `fn` after each response (and after each notification message) is written. */
  afterReply(fn: () => Promise<void> | void): () => void {
    this.#after.add(fn);
    return () => this.#after.delete(fn);
  }

  /** Runs the after-reply hooks (called by the transport). */
  async replied(): Promise<void> {
    for (const fn of this.#after) await fn();
  }

  /** Runs `fn` when the connection ends. */
  onClose(fn: () => void): void {
    this.#closers.add(fn);
  }

  /** Ends the connection's state (called by the transport). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const fn of this.#closers) {
      try {
        fn();
      } catch { /* cleanup never throws out */ }
    }
  }
}
