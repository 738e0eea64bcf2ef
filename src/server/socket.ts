/**
 * Serving the protocol on a connection: defensive NDJSON framing (line cap,
 * strict UTF-8, idle read deadline), requests answered in order, and
 * `events.subscribe` turning the connection into an event stream.
 *
 * @module
 */
import { z } from "zod";
import { ErrorCode, MAX_LINE_BYTES } from "../spec/codes.ts";
import { describeZodError, EVENT_TYPES } from "../spec/protocol.ts";
import type { EventBus } from "./bus.ts";
import { dispatch, type HostContext, parseEnvelope, type Response } from "./rpc.ts";

/** A byte stream with a writer, such as a `Deno.Conn` or stdio. */
export interface Duplex {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  close(): void;
}

/** Limits applied to one connection. */
export interface ConnectionOptions {
  idleTimeoutMs: number;
  heartbeatMs: number;
  bus: EventBus;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

const SubscribeParams = z.strictObject({
  surfaces: z.array(z.number().int().min(1)).optional(),
  types: z.array(z.enum(EVENT_TYPES as unknown as [string, ...string[]])).optional(),
});

async function writeAll(conn: Duplex, data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += await conn.write(data.subarray(off));
}

/**
 * Writes one JSON value within `ms`; a peer that does not read its answers
 * (so the write cannot finish) loses the connection instead of holding a slot.
 */
async function writeWithin(conn: Duplex, value: unknown, ms: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const write = writeJson(conn, value);
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

function errorResponse(code: number, message: string, id: unknown = null): Response {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

class LineReader {
  #buf = new Uint8Array(0);
  #chunk = new Uint8Array(64 * 1024);
  constructor(private readonly _conn: Duplex) {}

  /** The next line (without "\n"), null at EOF, or "too_long". */
  async next(): Promise<Uint8Array | null | "too_long"> {
    while (true) {
      const nl = this.#buf.indexOf(10);
      if (nl >= 0) {
        const line = this.#buf.slice(0, nl);
        this.#buf = this.#buf.slice(nl + 1);
        return line.length > MAX_LINE_BYTES ? "too_long" : line;
      }
      if (this.#buf.length > MAX_LINE_BYTES) return "too_long";
      const n = await this._conn.read(this.#chunk);
      if (n === null) return null;
      const next = new Uint8Array(this.#buf.length + n);
      next.set(this.#buf);
      next.set(this.#chunk.subarray(0, n), this.#buf.length);
      this.#buf = next;
    }
  }
}

/** Serves one connection until the peer leaves or breaks the rules. */
export async function serveConnection(
  conn: Duplex,
  ctx: HostContext,
  opts: ConnectionOptions,
): Promise<void> {
  const reader = new LineReader(conn);
  const reply = (value: unknown) => writeWithin(conn, value, opts.idleTimeoutMs);
  try {
    while (true) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const idle = new Promise<"idle">((resolve) => {
        timer = setTimeout(() => resolve("idle"), opts.idleTimeoutMs);
      });
      const line = await Promise.race([reader.next(), idle]);
      clearTimeout(timer);
      if (line === null || line === "idle") return;
      if (line === "too_long") {
        await reply(
          errorResponse(
            ErrorCode.InvalidRequest,
            `Invalid request: line exceeds ${MAX_LINE_BYTES} bytes; connection closed`,
          ),
        );
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
        await streamEvents(conn, reader, req.id, req.params, opts);
        return;
      }
      const res = await dispatch(ctx, req);
      if (!req.notification) await reply(res);
    }
  } catch {
    // The peer went away mid-write; nothing to answer.
  } finally {
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

async function streamEvents(
  conn: Duplex,
  reader: LineReader,
  id: unknown,
  params: unknown,
  opts: ConnectionOptions,
) {
  const parsed = SubscribeParams.safeParse(params);
  if (!parsed.success) {
    await writeJson(
      conn,
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
  // Input on a stream is ignored; the peer closing its end, or an oversized
  // line (which `next()` reports without consuming, so looping on it would
  // spin forever and starve the host), ends the stream.
  (async () => {
    try {
      while (true) {
        const line = await reader.next();
        if (line === null || line === "too_long") break;
      }
    } catch { /* closed */ }
    sub.close();
  })();
  try {
    await writeJson(conn, { type: "subscribed", id });
    while (true) {
      const ev = await sub.next(opts.heartbeatMs);
      if (ev === null) return;
      await writeJson(conn, ev === undefined ? { type: "heartbeat", ts: Date.now() } : ev);
    }
  } finally {
    sub.close();
  }
}
