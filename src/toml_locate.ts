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
  const positions = new Map<string, Position>();
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineStarts.push(i + 1);

  const posAt = (offset: number): Position => {
    let lo = 0, hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: offset - lineStarts[lo] + 1 };
  };
  const record = (path: KeyPath, offset: number) => {
    const k = JSON.stringify(path);
    if (!positions.has(k)) positions.set(k, posAt(offset));
  };

  const aotCount = new Map<string, number>();
  let i = 0;

  const skipInline = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\t")) i++;
  };
  const skipComment = () => {
    if (text[i] === "#") { while (i < text.length && text[i] !== "\n") i++; }
  };
  /** Whitespace, newlines and comments (inside arrays and between statements). */
  const skipAll = () => {
    while (i < text.length) {
      const c = text[i];
      if (c === " " || c === "\t" || c === "\r" || c === "\n") i++;
      else if (c === "#") skipComment();
      else break;
    }
  };

  const readString = (): string => {
    const q = text[i];
    const triple = text.startsWith(q.repeat(3), i);
    if (triple) {
      i += 3;
      const start = i;
      while (i < text.length) {
        if (q === '"' && text[i] === "\\") {
          i += 2;
          continue;
        }
        if (text.startsWith(q.repeat(3), i)) {
          // A closing delimiter may be followed by up to two more quotes.
          let end = i + 3;
          while (end < text.length && text[end] === q && end - i < 5) end++;
          const body = text.slice(start, end - 3);
          i = end;
          return body;
        }
        i++;
      }
      return text.slice(start);
    }
    i++;
    let out = "";
    while (i < text.length && text[i] !== q && text[i] !== "\n") {
      if (q === '"' && text[i] === "\\") {
        const e = text[i + 1];
        if (e in ESCAPES) {
          out += ESCAPES[e];
          i += 2;
        } else if (e === "u" || e === "U") {
          const len = e === "u" ? 4 : 8;
          out += String.fromCodePoint(parseInt(text.slice(i + 2, i + 2 + len), 16) || 0xfffd);
          i += 2 + len;
        } else {
          out += e ?? "";
          i += 2;
        }
        continue;
      }
      out += text[i++];
    }
    i++;
    return out;
  };

  /** A dotted key; returns each segment with the offset where it starts. */
  const readKey = (): { name: string; offset: number }[] => {
    const segs: { name: string; offset: number }[] = [];
    while (i < text.length) {
      skipInline();
      const offset = i;
      let name = "";
      if (text[i] === '"' || text[i] === "'") name = readString();
      else while (i < text.length && BARE.test(text[i])) name += text[i++];
      if (i === offset) break;
      segs.push({ name, offset });
      skipInline();
      if (text[i] === ".") i++;
      else break;
    }
    return segs;
  };

  const readValue = (path: KeyPath): void => {
    skipInline();
    const c = text[i];
    if (c === '"' || c === "'") {
      readString();
    } else if (c === "{") {
      i++;
      while (i < text.length) {
        skipAll();
        if (text[i] === "}") {
          i++;
          return;
        }
        if (text[i] === ",") {
          i++;
          continue;
        }
        const before = i;
        readKeyValue(path);
        if (i === before) i++;
      }
    } else if (c === "[") {
      i++;
      let index = 0;
      while (i < text.length) {
        skipAll();
        if (text[i] === "]") {
          i++;
          return;
        }
        if (text[i] === ",") {
          i++;
          index++;
          continue;
        }
        const before = i;
        record([...path, index], i);
        readValue([...path, index]);
        if (i === before) i++;
      }
    } else {
      while (i < text.length && !",]}\n#".includes(text[i])) i++;
    }
  };

  /** `key = value` under `table`. */
  const readKeyValue = (table: KeyPath) => {
    const segs = readKey();
    if (!segs.length) return;
    let path: KeyPath = table;
    for (const s of segs) {
      path = [...path, s.name];
      record(path, s.offset);
    }
    skipInline();
    if (text[i] === "=") i++;
    readValue(path);
  };

  /** Resolves a header's segments, stepping into the current element of each array of tables. */
  const resolve = (names: string[]): (string | number)[] => {
    const out: (string | number)[] = [];
    for (const n of names) {
      out.push(n);
      const count = aotCount.get(JSON.stringify(out));
      if (count !== undefined) out.push(count - 1);
    }
    return out;
  };

  let table: KeyPath = [];
  while (i < text.length) {
    skipAll();
    if (i >= text.length) break;
    const start = i;
    if (text[i] === "[") {
      const aot = text[i + 1] === "[";
      i += aot ? 2 : 1;
      const segs = readKey();
      skipInline();
      i += aot ? 2 : 1;
      const names = segs.map((s) => s.name);
      if (aot) {
        const parent = resolve(names.slice(0, -1));
        const arrayPath = [...parent, names[names.length - 1]];
        const key = JSON.stringify(arrayPath);
        const n = aotCount.get(key) ?? 0;
        aotCount.set(key, n + 1);
        record(arrayPath, start);
        table = [...arrayPath, n];
      } else {
        table = resolve(names);
      }
      record(table, start);
    } else {
      const before = i;
      readKeyValue(table);
      if (i === before) i++;
    }
    skipInline();
    skipComment();
  }

  return (path: KeyPath): Position => {
    for (let n = path.length; n > 0; n--) {
      const p = positions.get(JSON.stringify(path.slice(0, n)));
      if (p) return p;
    }
    return { line: 1, column: 1 };
  };
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
