/**
 * The two terminal engines (src/core/pane/engine.ts) render the same
 * output into the same screens: a corpus of recorded and generated output
 * (the bench's workloads, a recorded Claude Code session, vttest-like
 * sequences) goes through xterm.js and Ghostty, and the screens are
 * compared cell by cell (text, width, colours, attributes), with the
 * cursor, modes, title, soft wraps and the text of the history. Every
 * difference must be one docs/engines.md explains ({@link EXPLAINED}); an
 * explained difference that no longer occurs fails too, so the list stays
 * true.
 *
 * The full corpus (bigger workloads) runs with `PANEFLOW_CONFORMANCE_KIB=1024`.
 */
import assert from "node:assert/strict";
import { createEngine, prepareEngine } from "../src/core/pane/engines.ts";
import type { EngineCell, PaneEngine } from "../src/core/pane/engine.ts";
import { readLines } from "../src/core/pane/screen.ts";
import { type Workload, WORKLOADS, writeWorkload } from "../bench/workloads.ts";

type Step = string | { resize: [number, number] };
interface Case {
  name: string;
  cols?: number;
  rows?: number;
  steps: Step[];
}

const E = "\x1b";
const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i)).join("\r\n");

/** vttest-like sequences, one feature each. */
const CASES: Case[] = [
  {
    name: "scroll region",
    steps: [
      lines(6, (i) => `top ${i}`),
      `${E}[2;4r${E}[4;1H`,
      lines(8, (i) => `in ${i}`),
      `${E}[r${E}[6;1Hend`,
    ],
  },
  {
    name: "reverse index and insert/delete lines",
    steps: [lines(8, (i) => `row ${i}`), `${E}[1;1H${E}M${E}M${E}[3;1H${E}[2L${E}[6;1H${E}[1M`],
  },
  {
    name: "erase and edit",
    steps: [
      "abcdefghij\r\n0123456789\r\nxyz",
      `${E}[1;4H${E}[K${E}[2;3H${E}[3P${E}[2;1H${E}[2@${E}[3;2H${E}[1X\tT\x08U\r\n${E}[41mbg${E}[K${E}[0m`,
      `${E}[5;1H${E}[1J`,
    ],
  },
  {
    name: "wide and combining characters",
    cols: 12,
    steps: ["日本語 e\u0301 a\u0308\r\n", "한국어한국어한\r\n", "abcdefghijk日x\r\n", "ok\u200bz \u00e9\r\n"],
  },
  {
    name: "emoji and grapheme clusters",
    cols: 12,
    steps: ["👍 👍🏽 🇫🇷 ✓ →\r\n", "👩\u200d💻 x\r\n"],
  },
  {
    name: "alternate screen",
    steps: [
      "normal 1\r\nnormal 2",
      `${E}[?1049h${E}[Halt ${E}[1mbold${E}[0m${E}[3;3Hthere`,
      `${E}[?1049l after`,
    ],
  },
  {
    name: "alternate screen held",
    steps: ["before\r\n", `${E}[?1049h${E}[2J${E}[H${E}[7mmenu${E}[0m\r\n  item`],
  },
  {
    name: "SGR stacks",
    steps: [
      `${E}[1;2;3;4;5;7;8;9mall${E}[0m ${E}[31;42mrg${E}[39mdef${E}[49m `,
      `${E}[38;5;100m100${E}[48;5;231m231${E}[0m ${E}[38;2;10;20;30;48;2;200;100;50mtc${E}[0m `,
      `${E}[91;102mbright${E}[0m ${E}[1;31mboldred${E}[22mred${E}[0m ${E}[3mit${E}[23m${E}[4mul${E}[24m`,
      `${E}[7minv${E}[27m ${E}[2mdim${E}[22m ${E}[9mst${E}[29m ${E}[4:3mcurly${E}[0m`,
      `\r\n${E}[38;2;1;2;3mone-two-three${E}[0m ${E}[38;5;16mcube0${E}[0m ${E}[38;5;244mgrey${E}[0m`,
    ],
  },
  {
    name: "OSC titles and hyperlinks",
    steps: [
      `${E}]0;first title\x07one `,
      `${E}]2;second${E}\\two `,
      `${E}]8;;https://example.com\x07link${E}]8;;\x07 after`,
      `${E}]7501;?\x07 ${E}]1;icon\x07tail`,
    ],
  },
  {
    name: "DEC modes",
    steps: [`${E}[?1h${E}=${E}[?2004h${E}[?25l`, "modes set"],
  },
  {
    name: "DEC modes reset",
    steps: [`${E}[?1h${E}=${E}[?2004h${E}[?25l`, `${E}[?1l${E}>${E}[?2004l${E}[?25h`, "modes reset"],
  },
  {
    name: "no autowrap and insert mode",
    cols: 10,
    steps: [`${E}[?7l0123456789abcdef\r\n${E}[?7h`, `abcdef\r${E}[4hXY${E}[4l\r\n`, "0123456789abc"],
  },
  {
    name: "origin mode",
    steps: [`${E}[3;6r${E}[?6h${E}[1;1Horigin${E}[?6l${E}[r${E}[1;1Htop`],
  },
  {
    name: "tabs",
    steps: ["a\tb\tc\r\n", `${E}[3g${E}[1;5H${E}H\r\n1\t2\t3`],
  },
  {
    name: "soft wraps",
    cols: 10,
    steps: ["0123456789012345678901234\r\n", "0123456789\r\nexactly ten\r\n", `${E}[3;8Hxyzw`],
  },
  {
    name: "resize narrower and wider",
    cols: 20,
    rows: 5,
    steps: [lines(12, (i) => `line ${i} ${"w".repeat(i)}`), { resize: [12, 5] }, "after", {
      resize: [30, 6],
    }],
  },
  {
    name: "resize while scrolled, taller and shorter",
    cols: 20,
    rows: 4,
    steps: [lines(10, (i) => `r${i}`), { resize: [20, 8] }, "x", { resize: [20, 3] }, "\r\ny"],
  },
  {
    name: "RIS and ED 3",
    steps: [lines(10, (i) => `old ${i}`), `${E}[3J`, "\r\nkept", `${E}c`, "fresh"],
  },
  {
    name: "save and restore cursor and attributes",
    steps: [`${E}[31m${E}7${E}[0m${E}[3;3Hmoved${E}8red`, `${E}[s${E}[5;5H${E}[uback`],
  },
];

const ZWSP = "U+200B (zero width space): xterm.js (and tmux) join it to the cell before, Ghostty drops it";
const XTERM_WIDTHS =
  "xterm.js measures emoji with Unicode 6 widths (1 column); Ghostty, tmux and Unicode 9+ give 2";
const REFLOW =
  "narrowing with the cursor at the end of a wrapped line: xterm.js drops the line's rewrapped " +
  "tail, Ghostty keeps it but leaves the cursor inside the line; tmux keeps it with the cursor after it";
const STALE =
  "Ghostty's error (ghostty-web 0.4.0): history rows keep stale cells past what was written; tmux " +
  "capture-pane agrees with xterm.js";

/** Differences docs/engines.md explains: `case: kind` -> the reason, in short. */
const EXPLAINED: Record<string, string> = {
  "wide and combining characters: cell chars": ZWSP,
  "wide and combining characters: history text": ZWSP,
  "emoji and grapheme clusters: cell width": XTERM_WIDTHS,
  "emoji and grapheme clusters: cell chars": XTERM_WIDTHS,
  "OSC titles and hyperlinks: cell underline":
    "xterm.js reports an OSC 8 link's cells as underlined; nothing asked for it (tmux: no underline)",
  "tabs: cursor":
    "a pending wrap: xterm.js (and tmux) put the cursor one past the last column, Ghostty on it",
  "resize narrower and wider: cursor": REFLOW,
  "resize narrower and wider: cell chars": REFLOW,
  "resize narrower and wider: wrap": REFLOW,
  "resize narrower and wider: history length": REFLOW,
  "resize narrower and wider: history text": REFLOW,
  "workload cjk: cell chars": STALE,
  "workload cjk: cell fg": STALE,
  "workload cjk: cell underline": STALE,
  "workload cjk: cell bg": STALE,
  "workload cjk: cell width": STALE,
  "workload cjk: cell bold": STALE,
  "workload cjk: history length": STALE,
  "workload cjk: history text": STALE,
};

/** The parts of a cell compared. */
function cellKey(c: EngineCell | undefined): Record<string, string | number | boolean> {
  if (!c) return { missing: true };
  const colour = (
    d: boolean,
    rgb: boolean,
    v: number,
  ) => (d ? "default" : rgb ? `rgb:${v.toString(16)}` : `idx:${v}`);
  return {
    chars: c.getChars(),
    width: c.getWidth(),
    fg: colour(c.isFgDefault(), c.isFgRGB(), c.getFgColor()),
    bg: colour(c.isBgDefault(), c.isBgRGB(), c.getBgColor()),
    bold: !!c.isBold(),
    dim: !!c.isDim(),
    italic: !!c.isItalic(),
    underline: !!c.isUnderline(),
    inverse: !!c.isInverse(),
    blink: !!c.isBlink(),
    invisible: !!c.isInvisible(),
    strikethrough: !!c.isStrikethrough(),
  };
}

interface Rendered {
  engine: PaneEngine;
  title: string | null;
}

async function render(kind: "xterm" | "ghostty", c: Case, data: Step[]): Promise<Rendered> {
  await prepareEngine(kind);
  const engine = createEngine(kind, { cols: c.cols ?? 40, rows: c.rows ?? 10, scrollback: 100_000 });
  const out: Rendered = { engine, title: null };
  engine.onTitle((t) => (out.title = t));
  engine.onReply(() => {});
  const enc = new TextEncoder();
  for (const step of data) {
    if (typeof step === "string") {
      const bytes = enc.encode(step);
      // As a PTY delivers it: 4 KiB at a time.
      for (let i = 0; i < bytes.length; i += 4096) {
        engine.parseNow!(bytes.subarray(i, i + 4096));
        engine.afterParse();
      }
    } else engine.resize(...step.resize);
  }
  return out;
}

/** Each kind of difference between the two renderings, with its first example. */
function differences(a: Rendered, b: Rendered): Map<string, string> {
  const found = new Map<string, string>();
  const note = (kind: string, where: string, x: unknown, g: unknown) => {
    if (!found.has(kind)) {
      found.set(kind, `${where}: xterm ${JSON.stringify(x)}, ghostty ${JSON.stringify(g)}`);
    }
  };
  const ea = a.engine, eb = b.engine;
  const ba = ea.active, bb = eb.active;
  if (ba.type !== bb.type) note("screen", "active screen", ba.type, bb.type);
  if (ba.cursorX !== bb.cursorX || ba.cursorY !== bb.cursorY) {
    note("cursor", "cursor", [ba.cursorX, ba.cursorY], [bb.cursorX, bb.cursorY]);
  }
  const ma = ea.modes(), mb = eb.modes();
  for (const k of Object.keys(ma) as (keyof typeof ma)[]) {
    if (ma[k] !== mb[k]) note(`mode ${k}`, "modes", ma[k], mb[k]);
  }
  if (a.title !== b.title) note("title", "title", a.title, b.title);
  for (let y = 0; y < ea.rows; y++) {
    const la = ba.getLine(ba.baseY + y), lb = bb.getLine(bb.baseY + y);
    if (!!la?.isWrapped !== !!lb?.isWrapped) note("wrap", `row ${y}`, la?.isWrapped, lb?.isWrapped);
    for (let x = 0; x < ea.cols; x++) {
      const ca = cellKey(la?.getCell(x)), cb = cellKey(lb?.getCell(x));
      for (const k of Object.keys(ca)) {
        if (ca[k] !== cb[k]) note(`cell ${k}`, `row ${y} col ${x}`, ca[k], cb[k]);
      }
    }
  }
  const ha = readLines(ea.reads(), 1_000_000, 0), hb = readLines(eb.reads(), 1_000_000, 0);
  if (ha.total_lines !== hb.total_lines) note("history length", "rows", ha.total_lines, hb.total_lines);
  const n = Math.min(ha.lines.length, hb.lines.length);
  for (let i = 1; i <= n; i++) {
    const ta = ha.lines[ha.lines.length - i], tb = hb.lines[hb.lines.length - i];
    if (ta !== tb) {
      note("history text", `row ${-i} from the end`, ta, tb);
      break;
    }
  }
  return found;
}

/** The bench workloads and the recorded Claude Code session, this many KiB each. */
const WORKLOAD_KIB = Number(Deno.env.get("PANEFLOW_CONFORMANCE_KIB") ?? 64);

async function workloadCases(): Promise<Case[]> {
  const dir = await Deno.makeTempDir({ prefix: "pfconf-" });
  try {
    const out: Case[] = [];
    for (const w of WORKLOADS as readonly Workload[]) {
      const f = await writeWorkload(w, `${dir}/${w}`, WORKLOAD_KIB * 1024, 7);
      // "\n" as "\r\n", as a PTY's line discipline hands a file to the terminal.
      const text = new TextDecoder().decode(await Deno.readFile(f.path)).replaceAll("\n", "\r\n");
      out.push({ name: `workload ${w}`, cols: 200, rows: 50, steps: [text] });
    }
    return out;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("conformance: xterm.js and Ghostty render the corpus into the same screens", async () => {
  const unexplained: string[] = [];
  const seen = new Set<string>();
  for (const c of [...CASES, ...await workloadCases()]) {
    const [a, b] = [await render("xterm", c, c.steps), await render("ghostty", c, c.steps)];
    try {
      for (const [kind, example] of differences(a, b)) {
        const key = `${c.name}: ${kind}`;
        seen.add(key);
        if (!(key in EXPLAINED)) unexplained.push(`${key} (${example})`);
      }
    } finally {
      a.engine.dispose();
      b.engine.dispose();
    }
  }
  const stale = Object.keys(EXPLAINED).filter((k) => !seen.has(k));
  assert.deepEqual({ unexplained, stale }, { unexplained: [], stale: [] });
});
