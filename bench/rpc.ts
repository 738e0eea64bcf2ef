/**
 * A persistent JSON-RPC connection to a paneflow host for the benchmarks:
 * requests may be pipelined (answers come back in order), and an event
 * stream on its own connection.
 *
 * @module
 */

const encoder = new TextEncoder();

/** One newline-delimited JSON connection. */
class Lines {
  #buf = "";
  #decoder = new TextDecoder();
  #chunk = new Uint8Array(256 * 1024);
  constructor(readonly conn: Deno.UnixConn) {}

  async next(): Promise<string | null> {
    while (true) {
      const nl = this.#buf.indexOf("\n");
      if (nl >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        return line;
      }
      let n: number | null;
      try {
        n = await this.conn.read(this.#chunk);
      } catch {
        n = null;
      }
      if (n === null) return null;
      this.#buf += this.#decoder.decode(this.#chunk.subarray(0, n), { stream: true });
    }
  }

  async write(value: unknown) {
    const data = encoder.encode(JSON.stringify(value) + "\n");
    let off = 0;
    while (off < data.length) off += await this.conn.write(data.subarray(off));
  }

  close() {
    try {
      this.conn.close();
    } catch { /* closed */ }
  }
}

/** A JSON-RPC error answer. */
export class RpcError extends Error {
  constructor(readonly code: number, message: string) {
    super(`${code}: ${message}`);
  }
}

/** A persistent request/answer connection. */
export class Rpc {
  #lines: Lines;
  #id = 0;
  #waiting: { resolve: (v: unknown) => void; reject: (e: Error) => void }[] = [];
  #closed = false;

  private constructor(conn: Deno.UnixConn) {
    this.#lines = new Lines(conn);
    this.#pump();
  }

  static async connect(path: string): Promise<Rpc> {
    return new Rpc(await Deno.connect({ transport: "unix", path }));
  }

  async #pump() {
    while (true) {
      const line = await this.#lines.next();
      if (line === null) break;
      const waiter = this.#waiting.shift();
      if (!waiter) continue;
      const res = JSON.parse(line);
      if (res.error) waiter.reject(new RpcError(res.error.code, res.error.message));
      else waiter.resolve(res.result);
    }
    this.#closed = true;
    for (const w of this.#waiting.splice(0)) w.reject(new Error("connection closed"));
  }

  /** Calls a method; several calls may be in flight. */
  call<T = Record<string, unknown>>(method: string, params: unknown = {}): Promise<T> {
    if (this.#closed) return Promise.reject(new Error("connection closed"));
    const id = ++this.#id;
    const p = new Promise<T>((resolve, reject) =>
      this.#waiting.push({ resolve: resolve as (v: unknown) => void, reject })
    );
    this.#lines.write({ jsonrpc: "2.0", id, method, params }).catch(() => {});
    return p;
  }

  close() {
    this.#lines.close();
  }
}

/** An `events.subscribe` stream. */
export class Events {
  #lines: Lines;
  #listeners = new Set<(ev: Record<string, unknown>) => void>();

  private constructor(lines: Lines) {
    this.#lines = lines;
  }

  /** Subscribes and resolves once the host acknowledged. */
  static async subscribe(path: string, params: Record<string, unknown>): Promise<Events> {
    const lines = new Lines(await Deno.connect({ transport: "unix", path }));
    await lines.write({ jsonrpc: "2.0", id: 1, method: "events.subscribe", params });
    const ack = await lines.next();
    if (ack === null || JSON.parse(ack).type !== "subscribed") {
      lines.close();
      throw new Error(`events.subscribe failed: ${ack}`);
    }
    const ev = new Events(lines);
    ev.#pump();
    return ev;
  }

  async #pump() {
    while (true) {
      const line = await this.#lines.next();
      if (line === null) return;
      const ev = JSON.parse(line);
      for (const l of this.#listeners) l(ev);
    }
  }

  /** Calls `fn` for every event until the returned function is called. */
  on(fn: (ev: Record<string, unknown>) => void): () => void {
    this.#listeners.add(fn);
    return () => this.#listeners.delete(fn);
  }

  close() {
    this.#lines.close();
  }
}
