/**
 * A result already serialized (a session snapshot is ~2,000 cells: the pane
 * worker writes its JSON once, and it crosses to the main thread and onto
 * the wire as it is instead of being cloned and serialized again).
 *
 * The worker encodes the JSON as UTF-8 into a buffer with room before and
 * after it ({@link encodeJson}) and transfers the buffer to the main thread
 * (no copy); the framing writes the message's head (`Content-Length`,
 * `{"jsonrpc":"2.0","id":…,"result":`) into the room before and its end into
 * the room after, and the buffer goes to the socket as one write, without the
 * ~370 KB being copied, re-encoded or concatenated on the main thread.
 *
 * @module
 */

/** Bytes kept free before an encoded result: the message's head goes there. */
export const RAW_HEADROOM = 256;
/** Bytes kept free after it: `}` and the line's `\n`. */
export const RAW_TAILROOM = 2;

/** JSON as UTF-8 at `[RAW_HEADROOM, end)` of `buf`, with room around it (see {@link encodeJson}). */
export interface EncodedJson {
  buf: Uint8Array;
  end: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Encodes JSON text into a buffer with room for the message around it. */
export function encodeJson(text: string): EncodedJson {
  // Mostly ASCII: one byte per UTF-16 unit plus slack; a text with more
  // multi-byte characters than the slack takes the exact size.
  let buf = new Uint8Array(RAW_HEADROOM + text.length + (text.length >> 4) + 64 + RAW_TAILROOM);
  let r = encoder.encodeInto(text, buf.subarray(RAW_HEADROOM, buf.length - RAW_TAILROOM));
  if (r.read < text.length) {
    const bytes = encoder.encode(text);
    buf = new Uint8Array(RAW_HEADROOM + bytes.length + RAW_TAILROOM);
    buf.set(bytes, RAW_HEADROOM);
    r = { read: text.length, written: bytes.length };
  }
  return { buf, end: RAW_HEADROOM + r.written };
}

/**
 * Buffers for encoded results, used again: a pane worker answers each
 * `session.wait` with ~380 KB, and fresh memory for it costs page faults
 * and collector work on every answer (~0.3 ms of a wait's latency, measured
 * in bench/session_wait.ts). The main thread hands a buffer back once its
 * bytes are on the wire ({@link RawJson}'s `release`).
 */
export class RawBuffers {
  #free: ArrayBuffer[] = [];

  constructor(private readonly _keep = 4) {}

  /** A buffer of exactly `size` bytes (its contents are stale: the caller writes every byte it uses). */
  take(size: number): Uint8Array {
    const i = this.#free.findIndex((b) => b.byteLength >= size && b.byteLength <= 2 * size);
    if (i < 0) return new Uint8Array(size);
    const [b] = this.#free.splice(i, 1);
    return new Uint8Array(b, 0, size);
  }

  /** Keeps `buffer` for a later {@link take} (the newest few; the rest go to the collector). */
  give(buffer: ArrayBuffer): void {
    this.#free.unshift(buffer);
    if (this.#free.length > this._keep) this.#free.length = this._keep;
  }
}

/** The buffers to transfer (not copy) when `value` is, or carries as `json`, an {@link EncodedJson}. */
export function transferOf(value: unknown): ArrayBuffer[] {
  const v = value as { json?: unknown } | null;
  const e = (v && typeof v === "object" && "json" in v ? v.json : v) as Partial<EncodedJson> | null;
  return e && typeof e === "object" && e.buf instanceof Uint8Array && e.buf.buffer instanceof ArrayBuffer
    ? [e.buf.buffer]
    : [];
}

/**
 * JSON text to embed verbatim as a response's `result`; `T` names the value
 * the text holds, so a handler's reply is typed like a parsed one.
 */
export class RawJson<T = unknown> {
  /** Type only (never set): the value the JSON text holds. */
  declare readonly value?: T;
  #text: string | null;
  #encoded: EncodedJson | null;
  /** The room around the encoded JSON was used once: later frames copy. */
  #used = false;

  #release: ((buffer: ArrayBuffer) => void) | null;

  /** `release` gets the encoded buffer back once the message has been written (see {@link RawBuffers}). */
  constructor(text: string | EncodedJson, release?: (buffer: ArrayBuffer) => void) {
    this.#release = release ?? null;
    if (typeof text === "string") {
      this.#text = text;
      this.#encoded = null;
    } else {
      this.#text = null;
      this.#encoded = text;
    }
  }

  /** The JSON text. */
  get text(): string {
    if (this.#text === null && this.#encoded === null) throw new Error("the encoded result was released");
    this.#text ??= decoder.decode(this.#encoded!.buf.subarray(RAW_HEADROOM, this.#encoded!.end));
    return this.#text;
  }

  /** The JSON's size in UTF-8 bytes. */
  get byteLength(): number {
    return this.#encoded ? this.#encoded.end - RAW_HEADROOM : encoder.encode(this.#text!).length;
  }

  /** `prefix` + the JSON + `suffix` as bytes: in place when the room allows (once), else copied. */
  frame(prefix: string, suffix: string): Uint8Array {
    const e = this.#encoded;
    if (!e || this.#used) return encoder.encode(prefix + this.text + suffix);
    const head = encoder.encode(prefix);
    const tail = encoder.encode(suffix);
    if (head.length > RAW_HEADROOM || tail.length > RAW_TAILROOM) {
      return encoder.encode(prefix + this.text + suffix);
    }
    this.#used = true;
    e.buf.set(head, RAW_HEADROOM - head.length);
    e.buf.set(tail, e.end);
    return e.buf.subarray(RAW_HEADROOM - head.length, e.end + tail.length);
  }

  /** The message carrying this was written: its buffer goes back to whoever encoded it (the text is gone). */
  release(): void {
    const e = this.#encoded;
    const release = this.#release;
    this.#encoded = null;
    this.#release = null;
    if (e && release && e.buf.buffer instanceof ArrayBuffer) release(e.buf.buffer);
  }
}

/** Releases a written message's {@link RawJson} result, if it has one. */
export function releaseRaw(value: unknown): void {
  const v = value as { result?: unknown } | null;
  if (v && typeof v === "object" && v.result instanceof RawJson) v.result.release();
}

/** The message without its {@link RawJson} result, and that result (null when it has none). */
export function splitRaw(value: unknown): { head: string; raw: RawJson } | null {
  const v = value as { result?: unknown } | null;
  if (!v || typeof v !== "object" || !(v.result instanceof RawJson)) return null;
  const { result, ...rest } = v as { result: RawJson };
  const head = JSON.stringify(rest);
  return { head: `${head.slice(0, -1)}${head.length > 2 ? "," : ""}"result":`, raw: result };
}

/** Serializes a message; a `result` that is {@link RawJson} is spliced in as is. */
export function stringifyMessage(value: unknown): string {
  const split = splitRaw(value);
  return split ? `${split.head}${split.raw.text}}` : JSON.stringify(value);
}
