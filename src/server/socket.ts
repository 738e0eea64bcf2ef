/**
 * Serving the protocol on a connection: defensive framing (NDJSON on the
 * socket; NDJSON or LSP-style `Content-Length` headers on `serve --stdio`)
 * with a message cap, strict UTF-8 and an idle read deadline, requests
 * answered in order, and `events.subscribe` turning the connection into an
 * event stream.
 *
 * @module
 */
import { ErrorCode, MAX_LINE_BYTES } from "../spec/codes.ts";
import { describeZodError, SubscribeParams } from "../spec/protocol.ts";
import type { EventBus } from "./bus.ts";
import { Connection } from "./connection.ts";
import type { HostContext } from "./context.ts";
import { dispatch, parseEnvelope, type Response } from "./dispatch.ts";
import { redact } from "../session/redact.ts";

/** A byte stream with a writer, such as a `Deno.Conn` or stdio. */
export interface Duplex {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  close(): void;
}

/** How messages are delimited: one per line, or LSP's `Content-Length` headers. */
export type FramingName = "ndjson" | "lsp";

/** Limits applied to one connection. */
export interface ConnectionOptions {
  /** Idle read and write deadline; 0 for none (stdio: the client owns the host). */
  idleTimeoutMs: number;
  heartbeatMs: number;
  bus: EventBus;
  /** Default "ndjson". */
  framing?: FramingName;
  /** "socket" (default) or "stdio": what handlers see as `conn.kind`. */
  kind?: string;
  /** Called with the connection object once it exists (the host tracks them). */
  onConnection?: (conn: Connection) => void;
}

/** A message's bytes, the end of the stream, or a framing error that ends the connection. */
type Frame = Uint8Array | null | { fatal: string };

/** Reads and writes whole messages on a connection. */
interface Framing {
  next(): Promise<Frame>;
  write(value: unknown): Promise<void>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

async function writeAll(conn: Duplex, data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += await conn.write(data.subarray(off));
}

/**
 * Writes one message within `ms` (0: no deadline); a peer that does not read
 * its answers (so the write cannot finish) loses the connection instead of
 * holding a slot.
 */
async function writeWithin(framing: Framing, value: unknown, ms: number): Promise<void> {
  if (!ms) return framing.write(value);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const write = framing.write(value);
  write.catch(() => {});
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("write deadline passed")), ms);
  });
  try {
    await Promise.race([write, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** Writes one JSON value as a line. */
export function writeJson(conn: Duplex, value: unknown): Promise<void> {
  return writeAll(conn, encoder.encode(JSON.stringify(value) + "\n"));
}

/** An error response with its message redacted (ptywright: every error message). */
function redactError(value: unknown): unknown {
  const err = (value as { error?: { message?: unknown } } | null)?.error;
  if (!err || typeof err.message !== "string") return value;
  const message = redact(err.message);
  return message === err.message ? value : { ...(value as object), error: { ...err, message } };
}

function errorResponse(code: number, message: string, id: unknown = null): Response {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

const TOO_LONG = { fatal: `Invalid request: message exceeds ${MAX_LINE_BYTES} bytes; connection closed` };

/** Buffered reads of a connection. */
class ByteReader {
  buf = new Uint8Array(0);
  #chunk = new Uint8Array(64 * 1024);
  constructor(private readonly _conn: Duplex) {}

  /** Appends what the peer sends next to `buf`; false at EOF. */
  async fill(): Promise<boolean> {
    const n = await this._conn.read(this.#chunk);
    if (n === null) return false;
    const next = new Uint8Array(this.buf.length + n);
    next.set(this.buf);
    next.set(this.#chunk.subarray(0, n), this.buf.length);
    this.buf = next;
    return true;
  }

  /** Removes and returns the first `n` bytes of `buf`. */
  take(n: number): Uint8Array {
    const head = this.buf.slice(0, n);
    this.buf = this.buf.slice(n);
    return head;
  }
}

/** One JSON message per line. */
function ndjson(conn: Duplex): Framing {
  const reader = new ByteReader(conn);
  return {
    async next() {
      while (true) {
        const nl = reader.buf.indexOf(10);
        if (nl >= 0) {
          const line = reader.take(nl + 1).subarray(0, nl);
          return line.length > MAX_LINE_BYTES ? TOO_LONG : line;
        }
        if (reader.buf.length > MAX_LINE_BYTES) return TOO_LONG;
        if (!(await reader.fill())) {
          // A last request without its newline (`printf '%s' ... | nc -U`) is still answered.
          return reader.buf.length ? reader.take(reader.buf.length) : null;
        }
      }
    },
    write: (value) => writeJson(conn, value),
  };
}

const HEADER_END = new Uint8Array([13, 10, 13, 10]);
const MAX_HEADER_BYTES = 4096;

function indexOfBytes(hay: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/**
 * The Language Server Protocol's base protocol: `Content-Length: <n>\r\n`,
 * optional other headers, a blank line, then n bytes of JSON. A header that
 * cannot be parsed leaves the stream out of step, so it ends the connection.
 */
function lsp(conn: Duplex): Framing {
  const reader = new ByteReader(conn);
  return {
    async next() {
      let end: number;
      while ((end = indexOfBytes(reader.buf, HEADER_END)) < 0) {
        if (reader.buf.length > MAX_HEADER_BYTES) return { fatal: "Parse error: header block too long" };
        if (!(await reader.fill())) {
          return reader.buf.length ? { fatal: "Parse error: stream ended inside a header" } : null;
        }
      }
      const headers = new TextDecoder().decode(reader.take(end + HEADER_END.length).subarray(0, end));
      let length: number | undefined;
      for (const header of headers.split("\r\n")) {
        const m = /^([^:]+):\s*(.*)$/.exec(header);
        if (!m) return { fatal: `Parse error: malformed header ${JSON.stringify(header)}` };
        if (m[1].trim().toLowerCase() !== "content-length") continue;
        if (!/^\d+$/.test(m[2].trim())) {
          return { fatal: `Parse error: Content-Length is not a number: ${JSON.stringify(m[2])}` };
        }
        length = Number(m[2].trim());
      }
      if (length === undefined) return { fatal: "Parse error: no Content-Length header" };
      if (length > MAX_LINE_BYTES) return TOO_LONG;
      while (reader.buf.length < length) {
        if (!(await reader.fill())) return { fatal: "Parse error: stream ended inside a message" };
      }
      return reader.take(length);
    },
    write(value) {
      const body = encoder.encode(JSON.stringify(value));
      const frame = encoder.encode(`Content-Length: ${body.length}\r\n\r\n`);
      const out = new Uint8Array(frame.length + body.length);
      out.set(frame);
      out.set(body, frame.length);
      return writeAll(conn, out);
    },
  };
}

/** Serves one connection until the peer leaves or breaks the rules. */
export async function serveConnection(
  conn: Duplex,
  ctx: HostContext,
  opts: ConnectionOptions,
): Promise<void> {
  const framing = (opts.framing === "lsp" ? lsp : ndjson)(conn);
  // Every error message is redacted with the default policy before it goes out (ptywright's rule).
  const connection = new Connection(
    opts.kind ?? "socket",
    (value) => writeWithin(framing, redactError(value), opts.idleTimeoutMs),
  );
  opts.onConnection?.(connection);
  const reply = (value: unknown) => connection.send(value);
  try {
    while (true) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const idle = opts.idleTimeoutMs && !connection.keepAlive
        ? new Promise<"idle">((resolve) => {
          timer = setTimeout(() => resolve("idle"), opts.idleTimeoutMs);
        })
        : new Promise<never>(() => {});
      const line = await Promise.race([framing.next(), idle]);
      clearTimeout(timer);
      if (line === null || line === "idle") return;
      if ("fatal" in line) {
        const code = line === TOO_LONG ? ErrorCode.InvalidRequest : ErrorCode.ParseError;
        await reply(errorResponse(code, line.fatal));
        return;
      }
      let text: string;
      try {
        text = decoder.decode(line);
      } catch {
        await reply(errorResponse(ErrorCode.ParseError, "Parse error: request is not valid UTF-8"));
        continue;
      }
      if (!text.trim()) continue;
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch (e) {
        await reply(errorResponse(ErrorCode.ParseError, `Parse error: ${(e as Error).message}`));
        continue;
      }
      const req = parseEnvelope(value);
      if ("jsonrpc" in req) {
        await reply(req);
        continue;
      }
      if (req.method === "events.subscribe") {
        await streamEvents(framing, req.id, req.params, opts);
        return;
      }
      await connection.reply(async () => {
        const res = await dispatch(ctx, req, connection);
        return req.notification ? undefined : res;
      });
    }
  } catch {
    // The peer went away mid-write; nothing to answer.
  } finally {
    await connection.close();
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

async function streamEvents(framing: Framing, id: unknown, params: unknown, opts: ConnectionOptions) {
  const parsed = SubscribeParams.safeParse(params);
  if (!parsed.success) {
    await framing.write(
      errorResponse(
        ErrorCode.InvalidParams,
        `Invalid params for events.subscribe: ${describeZodError(parsed.error)}`,
        id,
      ),
    );
    return;
  }
  const sub = opts.bus.subscribe({
    // An empty list filters nothing, like an absent one.
    surfaces: parsed.data.surfaces?.length ? new Set(parsed.data.surfaces) : undefined,
    types: parsed.data.types?.length ? new Set(parsed.data.types) : undefined,
  });
  // Input on a stream is ignored; the peer closing its end, or a framing
  // error (an oversized line is reported without being consumed, so looping
  // on it would spin forever and starve the host), ends the stream.
  (async () => {
    try {
      while (true) {
        const frame = await framing.next();
        if (frame === null || "fatal" in frame) break;
      }
    } catch { /* closed */ }
    sub.close();
  })();
  try {
    await framing.write({ type: "subscribed", id });
    while (true) {
      const ev = await sub.next(opts.heartbeatMs);
      if (ev === null) return;
      await framing.write(ev === undefined ? { type: "heartbeat", ts: Date.now() } : ev);
    }
  } finally {
    sub.close();
  }
}
