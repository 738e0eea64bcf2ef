/**
 * One client connection as handlers see it (the third argument of every
 * handler): an id, an ordered outbound queue, server-initiated
 * notifications, close hooks, and a state bag services hang their
 * per-connection state on (session cursors, plugin grants, ...).
 *
 * Order: replies and notifications share one queue. A notification sent
 * while a handler of this connection is running is held until that
 * handler's reply has been written (response before notification, as
 * ptywright requires); outside a handler it goes out at once.
 *
 * @module
 */

/** Writes one message (already framed by the caller's framing). */
export type MessageWriter = (value: unknown) => Promise<void>;

/** A typed key into {@link Connection.state}. */
export interface StateKey<T> {
  readonly name: string;
  readonly init: () => T;
}

/** Makes a state key; one per service, at module level. */
export function stateKey<T>(name: string, init: () => T): StateKey<T> {
  return { name, init };
}

let nextId = 1;

/** A connection: see the module header. */
export class Connection {
  /** Unique for the host's lifetime, never reused. */
  readonly id = nextId++;
  /** "socket", "stdio" or "internal" (a call made by the host itself). */
  readonly kind: string;
  /** Exempt from the idle read deadline (a ptywright client sits quietly between calls). */
  keepAlive = false;
  /** When it was opened (ms since the epoch). */
  readonly openedAt = Date.now();
  /** Whether it carries an event stream (`events.subscribe`), budgeted apart from calls. */
  stream = false;
  /** The connecting process as the kernel saw it (`SO_PEERCRED`); null where unknown. */
  peer: { pid: number; uid: number; gid: number } | null = null;
  #write: MessageWriter;
  #queue: Promise<void> = Promise.resolve();
  #busy = 0;
  #held: unknown[] = [];
  #state = new Map<StateKey<unknown>, unknown>();
  #closeHooks = new Set<() => void | Promise<void>>();
  #closed = false;
  #onClose: (() => void) | undefined;

  constructor(kind: string, write: MessageWriter, onClose?: () => void) {
    this.kind = kind;
    this.#write = write;
    this.#onClose = onClose;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** A handler of this connection is running (its notifications are held). */
  get busy(): boolean {
    return this.#busy > 0;
  }

  /** Queues one message; resolves once it is written (rejects if the write fails). */
  send(value: unknown): Promise<void> {
    const p = this.#queue.then(() => this.#closed ? undefined : this.#write(value));
    this.#queue = p.catch(() => {});
    return p;
  }

  /** Sends a JSON-RPC notification (held while a handler of this connection runs). */
  notify(method: string, params?: unknown): void {
    const msg = params === undefined ? { jsonrpc: "2.0", method } : { jsonrpc: "2.0", method, params };
    if (this.#busy) this.#held.push(msg);
    else this.send(msg).catch(() => {});
  }

  /** Runs a handler and sends its reply before any notification it caused. */
  async reply(run: () => Promise<unknown | undefined>): Promise<void> {
    this.#busy++;
    let res: unknown;
    try {
      res = await run();
    } finally {
      this.#busy--;
    }
    const held = this.#busy ? [] : this.#held.splice(0);
    const written = res === undefined ? Promise.resolve() : this.send(res);
    for (const msg of held) this.send(msg).catch(() => {});
    await written;
  }

  /** This connection's value for `key`, made on first use. */
  state<T>(key: StateKey<T>): T {
    if (!this.#state.has(key)) this.#state.set(key, key.init());
    return this.#state.get(key) as T;
  }

  /** Runs `fn` when the connection closes (at once if it has). Returns an unregister function. */
  onClose(fn: () => void | Promise<void>): () => void {
    if (this.#closed) {
      void Promise.resolve().then(fn).catch(() => {});
      return () => {};
    }
    this.#closeHooks.add(fn);
    return () => this.#closeHooks.delete(fn);
  }

  /** Marks the connection closed and runs the close hooks once. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#onClose?.();
    for (const fn of this.#closeHooks) {
      try {
        await fn();
      } catch { /* a hook's failure must not keep others from running */ }
    }
    this.#closeHooks.clear();
    this.#state.clear();
  }
}

/** A connection for calls the host makes itself (nothing is ever sent on it). */
export function internalConnection(): Connection {
  return new Connection("internal", () => Promise.resolve());
}
