/**
 * Long-lived connections for event tests: an `events.subscribe` stream that
 * collects frames in the background (or deliberately never reads), a
 * persistent JSON-RPC connection, and a CLI child whose stdout is read line
 * by line while it runs.
 *
 * @module
 */
import type { Result, ResultMethod } from "../src/spec/results.ts";
import { Client } from "../src/client/client.ts";
import { ROOT, waitUntil } from "./_harness.ts";

const encoder = new TextEncoder();

/** One frame off an event stream. */
export type Frame = { type: string; surface_id?: number; [k: string]: unknown };

async function writeAll(conn: Deno.Conn, data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += await conn.write(data.subarray(off));
}

/** Splits a byte stream into lines. */
/** A connection's bytes, read into one reused buffer (each chunk is valid until the next is pulled). */
async function* chunksOf(conn: Deno.Conn): AsyncGenerator<Uint8Array> {
  const buf = new Uint8Array(256 * 1024);
  while (true) {
    const n = await conn.read(buf);
    if (n === null) return;
    yield buf.subarray(0, n);
  }
}

/**
 * The lines of a byte stream, each with the local time its chunk arrived. It
 * ends quietly when the stream ends or fails (a connection closed locally).
 */
async function* linesOf(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<{ line: string; at: number }> {
  const dec = new TextDecoder();
  let buf = "";
  try {
    for await (const chunk of chunks) {
      const at = performance.now();
      buf += dec.decode(chunk, { stream: true });
      const parts = buf.split("\n");
      buf = parts.pop()!;
      for (const line of parts) yield { line, at };
    }
  } catch {
    /* closed locally */
  }
}

/** Options for {@link subscribe}. */
export interface SubscribeOptions {
  surfaces?: number[];
  types?: string[];
  /** Request id (default 1). */
  id?: number | string;
  /** Do not read: frames pile up in the kernel and the host's queue until {@link EventStream.resume}. */
  paused?: boolean;
}

/** An `events.subscribe` connection. */
export class EventStream {
  /** Every frame read so far, in order, with the local time it was read. */
  readonly frames: Frame[] = [];
  readonly times: number[] = [];
  #closed = false;
  #ended = false;
  #reading: Promise<void> | null = null;

  constructor(readonly conn: Deno.Conn) {}

  /** Starts (or restarts) reading frames in the background. */
  resume(): void {
    this.#reading ??= this.#read();
  }

  async #read() {
    try {
      for await (const { line, at } of linesOf(chunksOf(this.conn))) {
        if (!line) continue;
        this.frames.push(JSON.parse(line));
        this.times.push(at);
      }
    } catch {
      /* not JSON: the stream is broken */
    }
    this.#ended = true;
  }

  /** Whether the host closed the stream. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Frames of one type (optionally of one surface). */
  of(type: string, surfaceId?: number): Frame[] {
    return this.frames.filter((f) =>
      f.type === type && (surfaceId === undefined || f.surface_id === surfaceId)
    );
  }

  /** Waits for a frame matching `pred` at or after index `from`; returns it. */
  waitFor(
    description: string,
    pred: (f: Frame) => boolean,
    { from = 0, timeoutMs = 10_000 } = {},
  ): Promise<Frame> {
    return waitUntil(description, () => {
      const f = this.frames.slice(from).find(pred);
      if (f) return f;
      if (this.#ended) throw new Error(`stream ended; frames: ${JSON.stringify(this.frames.slice(-5))}`);
      return false;
    }, { timeoutMs, intervalMs: 5 });
  }

  /** Closes the connection and waits for the reader to stop. */
  async close(): Promise<void> {
    if (!this.#closed) {
      this.#closed = true;
      try {
        this.conn.close();
      } catch { /* already closed */ }
    }
    await this.#reading;
  }
}

/** Opens a connection, sends `events.subscribe` and (unless paused) reads the ack. */
export async function subscribe(socket: string, opts: SubscribeOptions = {}): Promise<EventStream> {
  const conn = await Deno.connect({ transport: "unix", path: socket });
  const params: Record<string, unknown> = {};
  if (opts.surfaces) params.surfaces = opts.surfaces;
  if (opts.types) params.types = opts.types;
  const req = { jsonrpc: "2.0", id: opts.id ?? 1, method: "events.subscribe", params };
  await writeAll(conn, encoder.encode(JSON.stringify(req) + "\n"));
  const stream = new EventStream(conn);
  if (!opts.paused) {
    stream.resume();
    try {
      const ack = await stream.waitFor("the subscription ack", () => true, { timeoutMs: 5000 });
      if (ack.type !== "subscribed") throw new Error(`Expected the ack, got ${JSON.stringify(ack)}`);
    } catch (e) {
      await stream.close();
      throw e;
    }
  }
  return stream;
}

/**
 * A persistent JSON-RPC connection: the product's client (src/client/), so
 * requests may be pipelined and replies are matched by id.
 */
export class RpcConn {
  private constructor(readonly client: Client) {}

  /** Connects to `socket`. */
  static async open(socket: string): Promise<RpcConn> {
    // Tests flood the host on purpose (fuzz, soak): a generous deadline, still not forever.
    const conn = await Deno.connect({ transport: "unix", path: socket });
    return new RpcConn(new Client(conn, socket, { timeoutMs: 60_000 }));
  }

  /** Sends a request and returns the whole response object. */
  request(method: string, params: unknown = {}): Promise<Record<string, unknown>> {
    return this.client.request(method, params);
  }

  /** Calls a method and returns its result; throws on an error response. */
  async call<M extends ResultMethod>(method: M, params: unknown = {}): Promise<Result<M>> {
    const res = await this.request(method, params);
    if (res.error) throw new Error(`${method}: ${JSON.stringify(res.error)}`);
    return res.result as Result<M>;
  }

  close(): void {
    this.client.close();
  }
}

/** A running `paneflow <args>` whose stdout lines are collected as they come. */
export interface CliChild {
  /** Stdout lines so far. */
  lines: string[];
  stderr(): string;
  /** Whether the process has exited. */
  done(): boolean;
  /** Resolves with the exit code once the process has exited and its output is drained. */
  status: Promise<number>;
  /** Local time each stdout line was read (performance.now()). */
  times: number[];
  /** Local time the process was seen to exit (performance.now()), once it has. */
  exitedAt(): number | null;
  kill(signal?: Deno.Signal): void;
}

/** Starts the CLI as a child process with `env`. */
export function spawnCli(args: string[], env: Record<string, string>): CliChild {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: string[] = [];
  const times: number[] = [];
  let err = "";
  let exited = false;
  let exitedAt: number | null = null;
  const outDone = (async () => {
    for await (const { line, at } of linesOf(child.stdout)) {
      lines.push(line);
      times.push(at);
    }
  })();
  const errDone = (async () => {
    const dec = new TextDecoder();
    for await (const chunk of child.stderr) err += dec.decode(chunk, { stream: true });
  })();
  const status = child.status.then(async (s) => {
    exitedAt = performance.now();
    await Promise.all([outDone, errDone]);
    exited = true;
    return s.code;
  });
  return {
    lines,
    times,
    stderr: () => err,
    done: () => exited,
    exitedAt: () => exitedAt,
    status,
    kill(signal = "SIGTERM") {
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    },
  };
}

/** The p-th percentile (0..100) of `values`. */
export function percentile(values: number[], p: number): number {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Connections the host on `socket` has accepted and not yet closed, from
 * /proc/net/unix (accepted sockets carry the listener's path). Lets a test
 * know a CLI child has connected before it acts on a pane.
 */
export function hostConnections(socket: string): number {
  const lines = Deno.readTextFileSync("/proc/net/unix").split("\n");
  return lines.filter((l) => l.endsWith(` ${socket}`)).length - 1;
}
