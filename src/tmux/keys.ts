/**
 * tmux key names (`Enter`, `C-c`, `M-x`, `Up`, `F1`, …) as the bytes a
 * pane's program reads; a word that is no key name is typed as text, as
 * tmux's send-keys does. Pure.
 *
 * @module
 */
import { FUNCTION_KEYS } from "../spec/keys.ts";

const NAMED: Record<string, string> = {
  enter: "\r",
  escape: "\x1b",
  tab: "\t",
  btab: "\x1b[Z",
  bspace: "\x7f",
  space: " ",
  up: "\x1b[A",
  down: "\x1b[B",
  right: "\x1b[C",
  left: "\x1b[D",
  home: "\x1b[H",
  end: "\x1b[F",
  ppage: "\x1b[5~",
  pageup: "\x1b[5~",
  pgup: "\x1b[5~",
  npage: "\x1b[6~",
  pagedown: "\x1b[6~",
  pgdn: "\x1b[6~",
  dc: "\x1b[3~",
  delete: "\x1b[3~",
  ic: "\x1b[2~",
  insert: "\x1b[2~",
  ...FUNCTION_KEYS,
};

function ctrl(c: string): string | null {
  if (c === "?") return "\x7f";
  if (c === " " || c === "@" || c === "2") return "\x00";
  const code = c.toUpperCase().charCodeAt(0);
  return code >= 0x40 && code <= 0x5f ? String.fromCharCode(code - 0x40) : null;
}

/** The bytes of one send-keys word: a key name, or the word itself. */
export function keyWord(word: string): string {
  const named = NAMED[word.toLowerCase()];
  if (named !== undefined) return named;
  const m = /^((?:[CMS]-)+)(.+)$/.exec(word);
  if (m) {
    const mods = m[1];
    let base = m[2].length === 1 ? m[2] : NAMED[m[2].toLowerCase()];
    if (base === undefined) return word;
    if (mods.includes("S-") && base.length === 1) base = base.toUpperCase();
    if (mods.includes("C-")) {
      if (base.length !== 1) return word;
      const c = ctrl(base);
      if (c === null) return word;
      base = c;
    }
    return mods.includes("M-") ? `\x1b${base}` : base;
  }
  return word;
}

/** `send-keys -H`: each word a byte in hex. */
export function hexWord(word: string): string | null {
  return /^[0-9a-fA-F]{1,2}$/.test(word) ? String.fromCharCode(parseInt(word, 16)) : null;
}
