/**
 * Message framing, for both ends of a connection: NDJSON (one JSON value per
 * line: the socket, `serve --stdio`, the client) and the Language Server
 * Protocol's base protocol (`Content-Length` headers: `serve --stdio
 * --framing lsp`). Defensive: a message cap, a header-block cap, and framing
 * errors that end the connection instead of leaving it out of step; a
 * message over the cap ends it too, or, where the peer cannot reconnect, is
 * skipped.
 *
 * Reads go into one buffer addressed by indexes (`[start, end)`): taking a
 * message moves `start`, and bytes are only moved when the buffer is full
 * (to its front, or into one twice as big), so a read costs what it
 * received, not the size of what is buffered.
 *
 * No zod, no npm: the CLI loads this.
 *
 * @module
 */
import { releaseRaw, splitRaw, stringifyMessage } from "./raw_json.ts";
import { type Duplex, writeAll } from "./duplex.ts";

/** How messages are delimited: one per line, or LSP's `Content-Length` headers. */
export type FramingName = "ndjson" | "lsp";

/**
 * A message's bytes, the end of the stream, a framing error that ends the
 * connection, or (with {@link FramingOptions.skipTooLong}) a message over the
 * cap that was skipped, the connection going on.
 */
export type Frame = Uint8Array | null | { fatal: string; tooLong?: boolean } | { skipped: string };

/** Reads and writes whole messages on a connection. */
export interface Framing {
  /** The next message (its bytes are valid until the next call), null at the end. */
  next(): Promise<Frame>;
  write(value: unknown): Promise<void>;
}

/** Options for {@link framing}. */
export interface FramingOptions {
  /** The largest message accepted (default: no limit, for a client reading its host). */
  maxBytes?: number;
  /**
   * Skip a message over `maxBytes` (NDJSON: up to its newline; LSP: its
   * Content-Length bytes) and go on, instead of ending the connection: for a
   * peer that cannot reconnect (`serve --stdio`, one client for the host's life).
   */
  skipTooLong?: boolean;
}

const encoder = new TextEncoder();

/** Buffered reads of a duplex into one index-addressed buffer. */
export class ByteReader {
  #buf: Uint8Array;
  #start = 0;
  #end = 0;
  readonly #conn: Duplex;

  constructor(conn: Duplex, size = 64 * 1024) {
    this.#conn = conn;
    this.#buf = new Uint8Array(size);
  }

  /** The bytes received and not yet taken. */
  get pending(): Uint8Array {
    return this.#buf.subarray(this.#start, this.#end);
  }

  get length(): number {
    return this.#end - this.#start;
  }

  /** Reads what the peer sends next; false at EOF (or when the read fails: a closed connection). */
  async fill(): Promise<boolean> {
    if (this.#end === this.#buf.length) this.#makeRoom();
    let n: number | null;
    try {
      n = await this.#conn.read(this.#buf.subarray(this.#end));
    } catch {
      n = null;
    }
    if (n === null) return false;
    this.#end += n;
    return true;
  }

  /** Takes the first `n` pending bytes (a view, valid until the next fill). */
  take(n: number): Uint8Array {
    const out = this.#buf.subarray(this.#start, this.#start + n);
    this.#start += n;
    if (this.#start === this.#end) this.#start = this.#end = 0;
    return out;
  }

  /** Index of `byte` in the pending bytes at or after `from`, or -1. */
  indexOf(byte: number, from = 0): number {
    const i = this.#buf.subarray(this.#start + from, this.#end).indexOf(byte);
    return i < 0 ? -1 : i + from;
  }

  /** Moves the pending bytes to the front, into a buffer twice as big when they fill half of it. */
  #makeRoom(): void {
    const pending = this.#end - this.#start;
    if (pending * 2 > this.#buf.length) {
      const bigger = new Uint8Array(this.#buf.length * 2);
      bigger.set(this.#buf.subarray(this.#start, this.#end));
      this.#buf = bigger;
    } else {
      this.#buf.copyWithin(0, this.#start, this.#end);
    }
    this.#start = 0;
    this.#end = pending;
  }
}

/** One JSON value as an NDJSON line. */
export function encodeLine(value: unknown): Uint8Array {
  const split = splitRaw(value);
  if (split) return split.raw.frame(split.head, "}\n");
  return encoder.encode(stringifyMessage(value) + "\n");
}

/** Writes one JSON value as a line. */
export function writeJson(conn: Duplex, value: unknown): Promise<void> {
  return writeAll(conn, encodeLine(value)).finally(() => releaseRaw(value));
}

function tooLong(max: number): { fatal: string; tooLong: true } {
  return { fatal: `Invalid request: message exceeds ${max} bytes; connection closed`, tooLong: true };
}

function skipped(max: number): { skipped: string } {
  return { skipped: `Invalid request: message exceeds ${max} bytes; skipped` };
}

/** One JSON message per line. */
export function ndjson(conn: Duplex, opts: FramingOptions = {}): Framing {
  const max = opts.maxBytes ?? Infinity;
  const reader = new ByteReader(conn);
  let scanned = 0; // pending bytes known to hold no newline
  let skipping = false; // dropping the rest of a line already reported as too long
  return {
    async next() {
      while (true) {
        if (skipping) {
          const end = reader.indexOf(10);
          reader.take(end < 0 ? reader.length : end + 1);
          if (end >= 0) skipping = false;
          else if (!(await reader.fill())) return null;
          continue;
        }
        const nl = reader.indexOf(10, scanned);
        if (nl >= 0) {
          scanned = 0;
          const line = reader.take(nl + 1).subarray(0, nl);
          return line.length <= max ? line : opts.skipTooLong ? skipped(max) : tooLong(max);
        }
        scanned = reader.length;
        if (reader.length > max) {
          // Reported without consuming: the caller ends the connection.
          if (!opts.skipTooLong) return tooLong(max);
          // Reported now, the rest of the line dropped as it comes: a line need not end for its answer.
          scanned = 0;
          skipping = true;
          return skipped(max);
        }
        if (!(await reader.fill())) {
          scanned = 0;
          // A last message without its newline (`printf '%s' ... | nc -U`) still counts.
          return reader.length ? reader.take(reader.length) : null;
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

/** One JSON value as an LSP frame. */
export function encodeLsp(value: unknown): Uint8Array {
  const split = splitRaw(value);
  if (split) {
    const length = encoder.encode(split.head).length + split.raw.byteLength + 1;
    return split.raw.frame(`Content-Length: ${length}\r\n\r\n${split.head}`, "}");
  }
  const body = encoder.encode(stringifyMessage(value));
  const frame = encoder.encode(`Content-Length: ${body.length}\r\n\r\n`);
  const out = new Uint8Array(frame.length + body.length);
  out.set(frame);
  out.set(body, frame.length);
  return out;
}

/**
 * The Language Server Protocol's base protocol: `Content-Length: <n>\r\n`,
 * optional other headers, a blank line, then n bytes of JSON. A header that
 * cannot be parsed leaves the stream out of step, so it ends the connection.
 */
export function lsp(conn: Duplex, opts: FramingOptions = {}): Framing {
  const max = opts.maxBytes ?? Infinity;
  const reader = new ByteReader(conn);
  let skip = 0; // bytes left of a body already reported as too long
  return {
    async next() {
      while (skip > 0) {
        if (!reader.length && !(await reader.fill())) return null;
        skip -= reader.take(Math.min(skip, reader.length)).length;
      }
      let end: number;
      while ((end = indexOfBytes(reader.pending, HEADER_END)) < 0) {
        if (reader.length > MAX_HEADER_BYTES) return { fatal: "Parse error: header block too long" };
        if (!(await reader.fill())) {
          return reader.length ? { fatal: "Parse error: stream ended inside a header" } : null;
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
      if (length > max) {
        if (!opts.skipTooLong) return tooLong(max);
        // The length says where the next message starts: the stream stays in step.
        skip = length;
        return skipped(max);
      }
      while (reader.length < length) {
        if (!(await reader.fill())) return { fatal: "Parse error: stream ended inside a message" };
      }
      return reader.take(length);
    },
    write: (value) => writeAll(conn, encodeLsp(value)).finally(() => releaseRaw(value)),
  };
}

/** The framing called `name`. */
export function framing(name: FramingName, conn: Duplex, opts: FramingOptions = {}): Framing {
  return (name === "lsp" ? lsp : ndjson)(conn, opts);
}
