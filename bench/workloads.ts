/**
 * The bench's workload corpus: four kinds of terminal output, each written
 * deterministically (seeded) to a file of about the size asked for and
 * ending with a unique end marker line, so a reader knows the terminal has
 * parsed the last byte when the marker is on screen.
 *
 * - `log`: a log-like mix: 50 % timestamped log lines, 25 %
 *   lines of 2–8 SGR-coloured tokens (16-colour, bold, underline, inverse,
 *   256-colour, true colour), 7 % long lines that wrap at 200 columns, 5 %
 *   blank, 6 % tab-indented `file.ts:12:34<TAB>message` lines, 7 % lines
 *   with one or two non-ASCII symbols (é ─ ✓ → € or a CJK word).
 * - `build`: plain ASCII build output (compiler progress, warnings, test
 *   lines), no escapes at all.
 * - `cjk`: the older bench file (./gen.ts): line-numbered text, every line
 *   with wide CJK/Hangul, true colour, cursor-back overwrites.
 * - `claude`: a recorded Claude Code 2.1.328 session (./record_claude.ts,
 *   bench/fixtures/claude-2.1.328.raw: alternate screen, cursor addressing,
 *   redraws of the composer and dialogs), repeated to the size.
 *
 * @module
 */
import { rng } from "../tests/_prng.ts";
import { writeAnsiFile } from "./gen.ts";

export const WORKLOADS = ["log", "build", "cjk", "claude"] as const;
export type Workload = typeof WORKLOADS[number];

/** A written workload file. */
export interface WorkloadFile {
  name: Workload;
  path: string;
  bytes: number;
  /** The last line of the file; on screen once the terminal parsed everything. */
  marker: string;
}

const CLAUDE_FIXTURE = new URL("./fixtures/claude-2.1.328.raw", import.meta.url);
const LETTERS = "abcdefghijklmnopqrstuvwxyz";
const WORDS = (
  "request response handler worker pane buffer socket stream token session cache index " +
  "config module build test render parse flush queue retry timeout connect listen write " +
  "read update delete create commit branch merge deploy server client agent event"
).split(" ");
const LEVELS = ["INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR", "TRACE"];
const SYMBOLS = ["é", "─", "✓", "→", "€", "日本語", "변경", "ü", "✗", "…"];

/** Writes workload `name` to `path`, about `targetBytes` long. */
export async function writeWorkload(
  name: Workload,
  path: string,
  targetBytes: number,
  seed = 1,
): Promise<WorkloadFile> {
  const marker = `PANEFLOW-END-${name}-${seed}-${targetBytes}`;
  if (name === "cjk") {
    const f = await writeAnsiFile(path, targetBytes, { seed, tag: "cjk", tailLines: 10 });
    return { name, path, bytes: f.bytes, marker: f.marker };
  }
  if (name === "claude") {
    const session = await Deno.readFile(CLAUDE_FIXTURE);
    // Leave the alternate screen and reset attributes, so the marker shows on the normal screen.
    const tail = new TextEncoder().encode(`\x1b[?1049l\x1b[0m\r\n${marker}\n`);
    const reps = Math.max(1, Math.round(targetBytes / session.length));
    const out = new Uint8Array(reps * session.length + tail.length);
    for (let i = 0; i < reps; i++) out.set(session, i * session.length);
    out.set(tail, reps * session.length);
    await Deno.writeFile(path, out);
    return { name, path, bytes: out.length, marker };
  }
  const line = name === "log" ? logLine(rng(seed)) : buildLine(rng(seed));
  const enc = new TextEncoder();
  const file = await Deno.open(path, { write: true, create: true, truncate: true });
  let bytes = 0;
  try {
    let n = 0;
    while (bytes < targetBytes - 200) {
      const parts: string[] = [];
      let units = 0;
      while (units < 1 << 20 && bytes + units < targetBytes - 200) {
        const s = line(++n);
        parts.push(s);
        units += s.length;
      }
      const data = enc.encode(parts.join(""));
      await writeAll(file, data);
      bytes += data.length;
    }
    const end = enc.encode(`\x1b[0m${marker}\n`);
    await writeAll(file, end);
    bytes += end.length;
  } finally {
    file.close();
  }
  return { name, path, bytes, marker };
}

async function writeAll(file: Deno.FsFile, data: Uint8Array) {
  let off = 0;
  while (off < data.length) off += await file.write(data.subarray(off));
}

/** A line generator for the log-like mix (each call returns one line with its "\n"). */
function logLine(rand: () => number): (n: number) => string {
  const int = (k: number) => Math.floor(rand() * k);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)];
  const words = (k: number) => Array.from({ length: k }, () => pick(WORDS)).join(" ");
  const t0 = Date.UTC(2025, 0, 11, 7, 12, 58);
  let stampSec = -1;
  let stampText = "";
  const stamp = (n: number) => {
    const sec = Math.floor((t0 + n * 137) / 1000);
    if (sec !== stampSec) {
      stampSec = sec;
      stampText = new Date(sec * 1000).toISOString().slice(0, 19);
    }
    return stampText;
  };
  const sgr = () => {
    switch (int(6)) {
      case 0:
        return `3${int(8)}`;
      case 1:
        return `1;9${int(8)}`;
      case 2:
        return `4;3${int(8)}`;
      case 3:
        return "7";
      case 4:
        return `38;5;${int(256)}`;
      default:
        return `38;2;${int(256)};${int(256)};${int(256)}`;
    }
  };
  return (n: number) => {
    const r = int(100);
    if (r < 50) return `${stamp(n)} ${pick(LEVELS)} ${pick(WORDS)}: ${words(4 + int(12))}\n`;
    if (r < 75) {
      const k = 2 + int(7);
      let s = `${stamp(n)} `;
      for (let i = 0; i < k; i++) s += `\x1b[${sgr()}m${pick(WORDS)}\x1b[0m `;
      return `${s}${words(int(6))}\n`;
    }
    if (r < 82) {
      // 250–600 columns: wraps once or twice at 200.
      let s = `${stamp(n)} DEBUG payload:`;
      const want = 250 + int(350);
      while (s.length < want) {
        s += " ";
        for (let i = 2 + int(10); i > 0; i--) s += LETTERS[int(26)];
      }
      return `${s}\n`;
    }
    if (r < 87) return "\n";
    if (r < 93) {
      return `\tsrc/${pick(WORDS)}/${pick(WORDS)}.ts:${1 + int(900)}:${1 + int(80)}\t${words(3 + int(6))}\n`;
    }
    const k = 1 + int(2);
    let s = `${stamp(n)} INFO ${pick(WORDS)}:`;
    for (let i = 0; i < k; i++) s += ` ${words(1 + int(3))} ${pick(SYMBOLS)}`;
    return `${s} ${words(2 + int(4))}\n`;
  };
}

/** A line generator for plain ASCII build output. */
function buildLine(rand: () => number): (n: number) => string {
  const int = (k: number) => Math.floor(rand() * k);
  const pick = <T>(xs: readonly T[]) => xs[int(xs.length)];
  const path = () => `src/${pick(WORDS)}/${pick(WORDS)}_${pick(WORDS)}`;
  return (n: number) => {
    const r = int(100);
    const pct = String(Math.floor((n % 1000) / 10)).padStart(3);
    if (r < 40) return `[${pct}%] Building CXX object ${path()}.cc.o\n`;
    if (r < 55) return `   Compiling ${pick(WORDS)}-${pick(WORDS)} v0.${int(20)}.${int(10)}\n`;
    if (r < 65) {
      return `${path()}.cc:${1 + int(900)}:${1 + int(80)}: warning: unused variable '${
        pick(WORDS)
      }' [-Wunused-variable]\n`;
    }
    if (r < 70) {
      return `    ${int(1000)} | ${"  ".repeat(int(4))}auto ${pick(WORDS)} = ${pick(WORDS)}(${
        pick(WORDS)
      });\n`;
    }
    if (r < 72) return `      |      ^~~~~~~\n`;
    if (r < 90) {
      return `test ${pick(WORDS)}::${pick(WORDS)}_${pick(WORDS)} ... ok (${int(900)}ms)\n`;
    }
    if (r < 95) return `[${pct}%] Linking CXX static library lib${pick(WORDS)}.a\n`;
    return `make[${1 + int(3)}]: Leaving directory '/home/ci/build/${pick(WORDS)}'\n`;
  };
}
