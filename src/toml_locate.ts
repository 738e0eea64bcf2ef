/**
 * Where keys are in a TOML document. smol-toml reports positions only for
 * syntax errors; spec validation needs the line of every key it complains
 * about. This is a small structural scanner over text that has already parsed:
 * it follows table headers, arrays of tables, dotted keys, inline tables and
 * arrays, and skips strings and comments.
 *
 * @module
 */

/** A 1-based position in the source. */
export interface Position {
  line: number;
  column: number;
}

/** A key path into the parsed document: `["panes", 1, "env", "PORT"]`. */
export type KeyPath = readonly (string | number)[];

/** Looks up the position of a key path, falling back to its nearest located parent. */
export type Locator = (path: KeyPath) => Position;

const BARE = /[A-Za-z0-9_-]/;
const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f", '"': '"', "\\": "\\" };

/** Scans `text` and returns a locator for its key paths. */
export function locateKeys(text: string): Locator {
  const positions = new KeyScanner(text).scan();
  return (path: KeyPath): Position => {
    for (let n = path.length; n > 0; n--) {
      const p = positions.get(JSON.stringify(path.slice(0, n)));
      if (p) return p;
    }
    return { line: 1, column: 1 };
  };
}

/** One pass over TOML text that records where each key path first appears. */
class KeyScanner {
  readonly #text: string;
  /** The scanner's offset in the text. */
  #i = 0;
  /** Offsets where each line starts. */
  readonly #lineStarts = [0];
  /** Positions by key path (as JSON). */
  readonly #positions = new Map<string, Position>();
  /** Elements seen so far of each array of tables (by key path, as JSON). */
  readonly #aotCount = new Map<string, number>();

  constructor(text: string) {
    this.#text = text;
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") this.#lineStarts.push(i + 1);
  }

  /** Statements (table headers and `key = value`) to the end of the text. */
  scan(): Map<string, Position> {
    const text = this.#text;
    let table: KeyPath = [];
    while (this.#i < text.length) {
      this.#skipAll();
      if (this.#i >= text.length) break;
      if (text[this.#i] === "[") table = this.#header();
      else {
        const before = this.#i;
        this.#readKeyValue(table);
        if (this.#i === before) this.#i++;
      }
      this.#skipInline();
      this.#skipComment();
    }
    return this.#positions;
  }

  /** A `[table]` or `[[array of tables]]` header; returns the path of the table it opens. */
  #header(): KeyPath {
    const text = this.#text;
    const start = this.#i;
    const aot = text[this.#i + 1] === "[";
    this.#i += aot ? 2 : 1;
    const names = this.#readKey().map((s) => s.name);
    this.#skipInline();
    this.#i += aot ? 2 : 1;
    let table: KeyPath;
    if (aot) {
      const arrayPath = [...this.#resolve(names.slice(0, -1)), names[names.length - 1]];
      const key = JSON.stringify(arrayPath);
      const n = this.#aotCount.get(key) ?? 0;
      this.#aotCount.set(key, n + 1);
      this.#record(arrayPath, start);
      table = [...arrayPath, n];
    } else {
      table = this.#resolve(names);
    }
    this.#record(table, start);
    return table;
  }

  /** Resolves a header's segments, stepping into the current element of each array of tables. */
  #resolve(names: string[]): (string | number)[] {
    const out: (string | number)[] = [];
    for (const n of names) {
      out.push(n);
      const count = this.#aotCount.get(JSON.stringify(out));
      if (count !== undefined) out.push(count - 1);
    }
    return out;
  }

  #posAt(offset: number): Position {
    const starts = this.#lineStarts;
    let lo = 0, hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - starts[lo] + 1 };
  }

  #record(path: KeyPath, offset: number): void {
    const k = JSON.stringify(path);
    if (!this.#positions.has(k)) this.#positions.set(k, this.#posAt(offset));
  }

  #skipInline(): void {
    const text = this.#text;
    while (this.#i < text.length && (text[this.#i] === " " || text[this.#i] === "\t")) this.#i++;
  }

  #skipComment(): void {
    const text = this.#text;
    if (text[this.#i] === "#") { while (this.#i < text.length && text[this.#i] !== "\n") this.#i++; }
  }

  /** Whitespace, newlines and comments (inside arrays and between statements). */
  #skipAll(): void {
    const text = this.#text;
    while (this.#i < text.length) {
      const c = text[this.#i];
      if (c === " " || c === "\t" || c === "\r" || c === "\n") this.#i++;
      else if (c === "#") this.#skipComment();
      else break;
    }
  }

  /** A string of either quote; its value (escapes decoded in a one-line basic string). */
  #readString(): string {
    const text = this.#text;
    const q = text[this.#i];
    if (text.startsWith(q.repeat(3), this.#i)) return this.#readMultiline(q);
    this.#i++;
    let out = "";
    while (this.#i < text.length && text[this.#i] !== q && text[this.#i] !== "\n") {
      if (q === '"' && text[this.#i] === "\\") out += this.#readEscape();
      else out += text[this.#i++];
    }
    this.#i++;
    return out;
  }

  /** A `"""` or `'''` string: its body as written (escapes not decoded). */
  #readMultiline(q: string): string {
    const text = this.#text;
    this.#i += 3;
    const start = this.#i;
    while (this.#i < text.length) {
      if (q === '"' && text[this.#i] === "\\") {
        this.#i += 2;
        continue;
      }
      if (text.startsWith(q.repeat(3), this.#i)) {
        // A closing delimiter may be followed by up to two more quotes.
        let end = this.#i + 3;
        while (end < text.length && text[end] === q && end - this.#i < 5) end++;
        const body = text.slice(start, end - 3);
        this.#i = end;
        return body;
      }
      this.#i++;
    }
    return text.slice(start);
  }

  /** The escape sequence at the scanner (a backslash), decoded. */
  #readEscape(): string {
    const text = this.#text;
    const e = text[this.#i + 1];
    if (e in ESCAPES) {
      this.#i += 2;
      return ESCAPES[e];
    }
    if (e === "u" || e === "U") {
      const len = e === "u" ? 4 : 8;
      const hex = text.slice(this.#i + 2, this.#i + 2 + len);
      this.#i += 2 + len;
      return String.fromCodePoint(parseInt(hex, 16) || 0xfffd);
    }
    this.#i += 2;
    return e ?? "";
  }

  /** A dotted key; returns each segment with the offset where it starts. */
  #readKey(): { name: string; offset: number }[] {
    const text = this.#text;
    const segs: { name: string; offset: number }[] = [];
    while (this.#i < text.length) {
      this.#skipInline();
      const offset = this.#i;
      let name = "";
      if (text[this.#i] === '"' || text[this.#i] === "'") name = this.#readString();
      else while (this.#i < text.length && BARE.test(text[this.#i])) name += text[this.#i++];
      if (this.#i === offset) break;
      segs.push({ name, offset });
      this.#skipInline();
      if (text[this.#i] === ".") this.#i++;
      else break;
    }
    return segs;
  }

  /** `key = value` under `table`. */
  #readKeyValue(table: KeyPath): void {
    const segs = this.#readKey();
    if (!segs.length) return;
    let path: KeyPath = table;
    for (const s of segs) {
      path = [...path, s.name];
      this.#record(path, s.offset);
    }
    this.#skipInline();
    if (this.#text[this.#i] === "=") this.#i++;
    this.#readValue(path);
  }

  /** The value of the key at `path`: strings and scalars skipped, inline tables and arrays entered. */
  #readValue(path: KeyPath): void {
    const text = this.#text;
    this.#skipInline();
    const c = text[this.#i];
    if (c === '"' || c === "'") this.#readString();
    else if (c === "{") this.#readInlineTable(path);
    else if (c === "[") this.#readArray(path);
    else while (this.#i < text.length && !",]}\n#".includes(text[this.#i])) this.#i++;
  }

  /** `{ key = value, ... }` at `path`. */
  #readInlineTable(path: KeyPath): void {
    const text = this.#text;
    this.#i++;
    while (this.#i < text.length) {
      this.#skipAll();
      if (text[this.#i] === "}") {
        this.#i++;
        return;
      }
      if (text[this.#i] === ",") {
        this.#i++;
        continue;
      }
      const before = this.#i;
      this.#readKeyValue(path);
      if (this.#i === before) this.#i++;
    }
  }

  /** `[value, ...]` at `path`: each element is recorded at its index. */
  #readArray(path: KeyPath): void {
    const text = this.#text;
    this.#i++;
    let index = 0;
    while (this.#i < text.length) {
      this.#skipAll();
      if (text[this.#i] === "]") {
        this.#i++;
        return;
      }
      if (text[this.#i] === ",") {
        this.#i++;
        index++;
        continue;
      }
      const before = this.#i;
      this.#record([...path, index], this.#i);
      this.#readValue([...path, index]);
      if (this.#i === before) this.#i++;
    }
  }
}

/** A TOML file parsed for a spec checker; a syntax error is one located issue. */
export type ParsedToml =
  | { ok: true; raw: unknown; locate: Locator; baseDir: string }
  | {
    ok: false;
    issue: { file: string; line: number; column: number; path: (string | number)[]; message: string };
  };

/**
 * Parses a spec file's text with smol-toml (loaded lazily) and finds the
 * directory its relative paths resolve against (the file's, canonical). A
 * syntax error comes back with its position, for the checker's error type.
 */
export async function parseTomlFile(text: string, path: string, file = path): Promise<ParsedToml> {
  const { parse } = await import("smol-toml");
  let raw: unknown;
  try {
    raw = parse(text);
  } catch (e) {
    const err = e as Error & { line?: number; column?: number };
    const message = err.message.split("\n")[0].replace(/^Invalid TOML document: /, "");
    const at = { file, line: err.line ?? 1, column: err.column ?? 1, path: [] };
    return { ok: false, issue: { ...at, message: `invalid TOML: ${message}` } };
  }
  const abs = path.startsWith("/") ? path : `${Deno.cwd()}/${path}`;
  let baseDir = abs.slice(0, abs.lastIndexOf("/")) || "/";
  try {
    baseDir = Deno.realPathSync(baseDir);
  } catch { /* keep it as written */ }
  return { ok: true, raw, locate: locateKeys(text), baseDir };
}
