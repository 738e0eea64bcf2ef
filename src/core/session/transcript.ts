/**
 * A session's bounded transcript: the program's output decoded as UTF-8
 * (escape sequences included, as ptywright keeps it), at most
 * `max` characters (code points) retained, with a running count of every
 * character ever written so a reader can ask for what came after its cursor.
 *
 * @module
 */

/** Code points in `s` (UTF-16 length less its surrogate pairs). */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}

/** Index in `s` after skipping `n` code points from the start. */
function skipCodePoints(s: string, n: number, astral: boolean): number {
  if (!astral) return Math.min(n, s.length);
  let i = 0;
  while (n > 0 && i < s.length) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff ? 2 : 1;
    n--;
  }
  return i;
}

/** The transcript. */
export class Transcript {
  #buf = "";
  /** Code points in `#buf` (may exceed `max` until the next trim). */
  #held = 0;
  #astral = false;
  #decoder = new TextDecoder("utf-8");
  /** Every character ever written. */
  written = 0;

  constructor(readonly max: number) {}

  /** Appends raw output bytes. */
  push(bytes: Uint8Array): void {
    this.append(this.#decoder.decode(bytes, { stream: true }));
  }

  /** Appends text. */
  append(s: string): void {
    if (!s) return;
    const n = codePoints(s);
    if (n !== s.length) this.#astral = true;
    this.#buf += s;
    this.#held += n;
    this.written += n;
    // Trimmed with slack: each trim copies the retained text once.
    if (this.#held > this.max * 2 || this.#held > this.max + 1024 * 1024) this.#trim();
  }

  #trim() {
    if (this.#held <= this.max) return;
    this.#buf = this.#buf.slice(skipCodePoints(this.#buf, this.#held - this.max, this.#astral));
    this.#held = this.max;
  }

  /** Characters retained. */
  get retained(): number {
    return Math.min(this.#held, this.max);
  }

  /** The retained text. */
  text(): string {
    this.#trim();
    return this.#buf;
  }

  /** The last `n` characters. */
  tail(n: number): string {
    const text = this.text();
    if (this.#held <= n) return text;
    return text.slice(skipCodePoints(text, this.#held - n, this.#astral));
  }

  /** What was written after `cursor` characters, and whether part of it was evicted. */
  since(cursor: number): { text: string; dropped: boolean } {
    const first = this.written - this.retained;
    const dropped = cursor < first;
    const want = this.written - Math.max(cursor, first);
    if (want <= 0) return { text: "", dropped };
    return { text: this.tail(want), dropped };
  }
}
