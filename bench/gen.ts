/**
 * Deterministic test content for the benchmarks.
 *
 * {@link writeAnsiFile} writes a "mixed ANSI" stream: line-numbered text
 * lines with SGR colours (16, 256 and true colour), cursor-back overwrites,
 * carriage-return rewrites with erase-to-end, wide CJK/Hangul characters and
 * narrow non-ASCII letters, ending with a unique marker line. Alongside the
 * bytes it computes what a terminal must show for each line, so a reader can
 * check the tail of the scrollback exactly, and how many bytes a PTY
 * delivers for it (every "\n" becomes "\r\n" through the line discipline).
 *
 * @module
 */
import { rng } from "../tests/_prng.ts";

const WIDE = [..."漢字仮名交文試験中国語符号한국어테스트日本東京都"];
const NARROW = [..."αβγδεζηθλμπσωабвгдежзийклÀÉÎÕÜçñøåß"];
const LETTERS = "abcdefghijklmnopqrstuvwxyz";

/** What {@link writeAnsiFile} wrote. */
export interface AnsiFile {
  path: string;
  bytes: number;
  /** Lines in the file, marker included. */
  lines: number;
  marker: string;
  /** The rendered text of the last `tailLines` lines, oldest first (trailing blanks trimmed). */
  tail: string[];
  /** Bytes a PTY with onlcr delivers for the whole file (every "\n" becomes "\r\n"). */
  ptyBytes: number;
}

/**
 * Writes about `targetBytes` of mixed ANSI content to `path`.
 * Visible line width stays below `maxWidth` columns so nothing wraps.
 */
export async function writeAnsiFile(
  path: string,
  targetBytes: number,
  { seed = 1, maxWidth = 150, tailLines = 4000, tag = "A" } = {},
): Promise<AnsiFile> {
  const rand = rng(seed);
  const int = (n: number) => Math.floor(rand() * n);
  const word = (len: number) => {
    let s = "";
    for (let i = 0; i < len; i++) s += LETTERS[int(26)];
    return s;
  };
  const enc = new TextEncoder();
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  const tail: string[] = [];
  let bytes = 0;
  let newlines = 0;
  let lines = 0;
  let batch: string[] = [];
  let batchUnits = 0;
  const flush = async () => {
    const data = enc.encode(batch.join(""));
    let off = 0;
    while (off < data.length) off += await file.write(data.subarray(off));
    bytes += data.length;
    batch = [];
    batchUnits = 0;
  };
  const emit = (raw: string, text: string) => {
    lines++;
    batch.push(raw);
    batchUnits += raw.length;
    newlines++; // each raw row ends with one "\n"
    tail.push(text.replace(/ +$/, ""));
    if (tail.length >= 2 * tailLines) tail.splice(0, tail.length - tailLines);
  };
  try {
    while (bytes + batchUnits * 1.1 < targetBytes - 200) {
      const n = lines + 1;
      if (n % 97 === 0) {
        emit("\n", "");
      } else {
        const prefix = `L${String(n).padStart(8, "0")}`;
        let raw = prefix;
        let text = prefix;
        let width = prefix.length;
        const target = 40 + int(maxWidth - 50);
        while (width < target) {
          raw += " ";
          text += " ";
          width++;
          const kind = int(10);
          if (kind < 4) {
            const w = word(2 + int(8));
            raw += w;
            text += w;
            width += w.length;
          } else if (kind < 6) {
            const w = word(2 + int(8));
            const style = int(4);
            const sgr = style === 0
              ? `1;3${int(8)}`
              : style === 1
              ? `38;5;${int(256)}`
              : style === 2
              ? `48;2;${int(256)};${int(256)};${int(256)}`
              : `4;9${int(8)}`;
            raw += `\x1b[${sgr}m${w}\x1b[0m`;
            text += w;
            width += w.length;
          } else if (kind === 6) {
            const w = word(3 + int(6));
            raw += `${"#".repeat(w.length)}\x1b[${w.length}D${w}`;
            text += w;
            width += w.length;
          } else if (kind === 7) {
            let w = "";
            const k = 1 + int(4);
            for (let i = 0; i < k; i++) w += WIDE[int(WIDE.length)];
            raw += w;
            text += w;
            width += 2 * k;
          } else if (kind === 8) {
            let w = "";
            const k = 2 + int(6);
            for (let i = 0; i < k; i++) w += NARROW[int(NARROW.length)];
            raw += w;
            text += w;
            width += k;
          } else {
            const w = String(int(1_000_000));
            raw += `\x1b[2m${w}\x1b[22m`;
            text += w;
            width += w.length;
          }
        }
        if (n % 50 === 0) {
          // Draw a longer garbage line first, then rewrite it and erase the rest.
          raw = `${word(width + 10)}\r${raw}\x1b[K`;
        }
        emit(raw + "\n", text);
      }
      if (batchUnits > 1 << 20) await flush();
    }
    const marker = `PANEFLOW-BENCH-END-${tag}-${seed} lines=${lines + 1}`;
    emit(marker + "\n", marker);
    await flush();
    return { path, bytes, lines, marker, tail: tail.slice(-tailLines), ptyBytes: bytes + newlines };
  } finally {
    file.close();
  }
}

/**
 * Writes `lines` lines of exactly `cols` printable ASCII characters (varied
 * words, no escapes), for the memory benchmark.
 */
export async function writePlainFile(path: string, lines: number, cols = 80, seed = 7): Promise<number> {
  const rand = rng(seed);
  const parts: string[] = [];
  for (let n = 1; n <= lines; n++) {
    let s = `${String(n).padStart(6, "0")}`;
    while (s.length < cols) {
      const len = 1 + Math.floor(rand() * 9);
      let w = " ";
      for (let i = 0; i < len; i++) w += LETTERS[Math.floor(rand() * 26)];
      s += w;
    }
    parts.push(s.slice(0, cols) + "\n");
  }
  const data = new TextEncoder().encode(parts.join(""));
  await Deno.writeFile(path, data);
  return data.length;
}
