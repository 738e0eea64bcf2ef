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
import type { EventBus, Subscription } from "../core/bus.ts";
import { type ClientTable, MAX_STREAMS } from "./clients.ts";
import { Connection } from "../core/connection.ts";
import type { HostContext } from "./context.ts";
import { dispatch } from "./dispatch.ts";
import { redact } from "../session/redact.ts";
import type { Duplex } from "../wire/duplex.ts";
import { parseEnvelope, type Request, type Response } from "../wire/envelope.ts";
import { type Frame, type Framing, framing as makeFraming, type FramingName } from "../wire/framing.ts";

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
  /** The host's connection table: the event-stream budget is checked there. */
  clients?: ClientTable;
  /**
   * Answer a message over the cap and go on (stdio: the one client cannot
   * reconnect, and ending it would end the host); by default the error is
   * answered and the connection closed.
   */
  skipTooLong?: boolean;
  /** The connecting process (`SO_PEERCRED`), when the listener knows it. */
  peer?: { pid: number; uid: number; gid: number } | null;
  /** Whether this connection may see a pane's events (its caller's `read` grant). */
  readable?: (conn: Connection, surfaceId: number) => boolean;
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

const decoder = new TextDecoder("utf-8", { fatal: true });

/** An error response with its message redacted (ptywright: every error message). */
function redactError(value: unknown): unknown {
  const err = (value as { error?: { message?: unknown } } | null)?.error;
  if (!err || typeof err.message !== "string") return value;
  const message = redact(err.message);
  return message === err.message ? value : { ...(value as object), error: { ...err, message } };
}
/** An event stream's write deadline, in idle deadlines (30 s each by default). */
export const STREAM_GRACE = 4;

function errorResponse(code: number, message: string, id: unknown = null): Response {
  return { jsonrpc: "2.0", id, error: { code, message } };
}

/** What {@link linger} reads and drops at most, and for how long. */
const LINGER_BYTES = 4 * 1024 * 1024;
const LINGER_MS = 1000;

/**
 * After a framing error, reads and drops what the peer is still sending
 * (bounded in bytes and time) before the connection closes: a client still
 * writing its oversized message then finishes and reads the error, instead
 * of failing with a broken pipe (a lingering close, as HTTP servers do).
 */
async function linger(conn: Duplex): Promise<void> {
  const buf = new Uint8Array(64 * 1024);
  let left = LINGER_BYTES;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<null>((r) => (timer = setTimeout(() => r(null), LINGER_MS)));
  try {
    while (left > 0) {
      const n = await Promise.race([conn.read(buf).catch(() => null), deadline]);
      if (n === null) break;
      left -= n;
    }
  } finally {
    clearTimeout(timer);
  }
}

/** The next message, or "idle" when none comes within `ms` (0: no deadline). */
async function nextWithin(framing: Framing, ms: number): Promise<Frame | "idle"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = ms
    ? new Promise<"idle">((resolve) => {
      timer = setTimeout(() => resolve("idle"), ms);
    })
    : new Promise<never>(() => {});
  const line = await Promise.race([framing.next(), idle]);
  clearTimeout(timer);
  return line;
}

/**
 * A message's bytes as a request: strict UTF-8, then JSON, then the envelope;
 * a response is the error to answer instead, null a blank line to skip.
 */
function parseRequest(line: Uint8Array): Request | Response | null {
  let text: string;
  try {
    text = decoder.decode(line);
  } catch {
    return errorResponse(ErrorCode.ParseError, "Parse error: request is not valid UTF-8");
  }
  if (!text.trim()) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return errorResponse(ErrorCode.ParseError, `Parse error: ${(e as Error).message}`);
  }
  return parseEnvelope(value);
}

/** Serves one connection until the peer leaves or breaks the rules. */
export async function serveConnection(
  conn: Duplex,
  ctx: HostContext,
  opts: ConnectionOptions,
): Promise<void> {
  const framing = makeFraming(opts.framing ?? "ndjson", conn, {
    maxBytes: MAX_LINE_BYTES,
    skipTooLong: opts.skipTooLong,
  });
  // Every error message is redacted with the default policy before it goes out (ptywright's rule).
  // An event stream's reader may lag (its queue sheds with `dropped`); one that
  // reads nothing for STREAM_GRACE idle deadlines is closed, freeing its slot.
  const connection: Connection = new Connection(
    opts.kind ?? "socket",
    (value) =>
      writeWithin(framing, redactError(value), opts.idleTimeoutMs * (connection.stream ? STREAM_GRACE : 1)),
  );
  connection.peer = opts.peer ?? null;
  opts.onConnection?.(connection);
  const reply = (value: unknown) => connection.send(value);
  let sub: Subscription | null = null;
  try {
    while (true) {
      // A ptywright client sits quietly between calls (keepAlive), and a stream's reader need not send
      // anything (its write deadline sheds it if it stops reading): no idle deadline for either.
      const line = await nextWithin(framing, connection.keepAlive || sub ? 0 : opts.idleTimeoutMs);
      if (line === null || line === "idle") return;
      if ("fatal" in line) {
        const code = line.tooLong ? ErrorCode.InvalidRequest : ErrorCode.ParseError;
        await reply(errorResponse(code, line.fatal));
        await linger(conn);
        return;
      }
      if ("skipped" in line) {
        await reply(errorResponse(ErrorCode.InvalidRequest, line.skipped));
        continue;
      }
      const req = parseRequest(line);
      if (req === null) continue;
      if ("jsonrpc" in req) {
        await reply(req);
        continue;
      }
      if (req.method === "events.subscribe") {
        // The connection keeps answering calls; events share its ordered queue.
        sub = await subscribe(connection, req.id, req.params, opts, sub, () => {
          try {
            conn.close();
          } catch { /* closed */ }
        });
        continue;
      }
      await connection.reply(async () => {
        const res = await dispatch(ctx, req, connection);
        return req.notification ? undefined : res;
      });
    }
  } catch {
    // The peer went away mid-write; nothing to answer.
  } finally {
    sub?.close();
    await connection.close();
    try {
      conn.close();
    } catch { /* already closed */ }
  }
}

/**
 * Turns `connection` into an event stream as well: the ack, then every event
 * (a heartbeat after `heartbeatMs` of silence) through the connection's
 * queue, whose write deadline sheds a reader that stopped reading (`shed`
 * closes the connection). Returns the subscription, or the previous one
 * when the request is refused.
 */
async function subscribe(
  connection: Connection,
  id: unknown,
  params: unknown,
  opts: ConnectionOptions,
  current: Subscription | null,
  shed: () => void,
): Promise<Subscription | null> {
  if (current) {
    await connection.send(
      errorResponse(ErrorCode.InvalidRequest, "This connection is already subscribed", id),
    );
    return current;
  }
  const parsed = SubscribeParams.safeParse(params);
  if (!parsed.success) {
    await connection.send(
      errorResponse(
        ErrorCode.InvalidParams,
        `Invalid params for events.subscribe: ${describeZodError(parsed.error)}`,
        id,
      ),
    );
    return null;
  }
  if (opts.clients && !connection.stream && !opts.clients.admitsStream()) {
    await connection.send(
      errorResponse(
        ErrorCode.Backpressure,
        `Too many event streams: the host serves at most ${MAX_STREAMS} at once; retry later`,
        id,
      ),
    );
    return null;
  }
  connection.stream = true;
  const sub = opts.bus.subscribe({
    // An empty list filters nothing, like an absent one.
    surfaces: parsed.data.surfaces?.length ? new Set(parsed.data.surfaces) : undefined,
    types: parsed.data.types?.length ? new Set(parsed.data.types) : undefined,
    ...(opts.readable ? { readable: (id: number) => opts.readable!(connection, id) } : {}),
  });
  await connection.send({ type: "subscribed", id });
  (async () => {
    try {
      while (true) {
        const ev = await sub.next(opts.heartbeatMs);
        if (ev === null || connection.closed) return;
        await connection.send(ev === undefined ? { type: "heartbeat", ts: Date.now() } : ev);
      }
    } catch {
      shed(); // the write deadline passed: a reader that stopped reading
    } finally {
      sub.close();
    }
  })();
  return sub;
}
