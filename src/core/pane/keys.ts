/**
 * The bytes typed into a pane: named keystrokes for
 * `surface.send_keystroke` / `paneflow key`, the rule that refuses any
 * keystroke that would submit (CR or LF), and bracketed paste's framing (the
 * only place it is built).
 *
 * @module
 */
import { FUNCTION_KEYS } from "../../spec/keys.ts";

const NAMED: Record<string, string> = {
  tab: "\t",
  "shift-tab": "\x1b[Z",
  esc: "\x1b",
  escape: "\x1b",
  backspace: "\x7f",
  delete: "\x1b[3~",
  insert: "\x1b[2~",
  home: "\x1b[H",
  end: "\x1b[F",
  pageup: "\x1b[5~",
  pagedown: "\x1b[6~",
  space: " ",
  enter: "\r",
  return: "\r",
  ...FUNCTION_KEYS,
};

const ARROWS: Record<string, string> = { up: "A", down: "B", right: "C", left: "D" };

/** Every key name, for help text and error messages. */
export const KEY_NAMES =
  "tab, shift-tab, esc (escape), backspace, delete, insert, up, down, left, right, home, end, pageup, pagedown, space, f1..f12, ctrl-<letter>, alt-<key>, or one printable character (e.g. 1 to pick a dialog option)";

/** Options that change what a key sends. */
export interface KeyOptions {
  /** DECCKM is on: arrows send SS3 (`ESC O A`) instead of CSI. */
  applicationCursor?: boolean;
}

/**
 * The bytes for a key name, or an error message. Names are case-insensitive;
 * `ctrl+c` and `C-c` are accepted as `ctrl-c`.
 */
export function keyBytes(name: string, opts: KeyOptions = {}): { bytes: string } | { error: string } {
  // One printable character is typed as itself (case kept): `key <pane> 1` answers a dialog.
  if ([...name].length === 1 && /^[\p{L}\p{N}\p{P}\p{S}]$/u.test(name)) return { bytes: name };
  const key = name.trim().toLowerCase().replace(/^(ctrl|alt|c|m|shift)\+/, "$1-")
    .replace(/^c-/, "ctrl-").replace(/^m-/, "alt-");
  const bytes = lookup(key, opts);
  if (bytes === undefined) {
    return { error: `Unknown key ${JSON.stringify(name)}; known keys: ${KEY_NAMES}` };
  }
  if (bytes.includes("\r") || bytes.includes("\n")) {
    return {
      error: `Key ${JSON.stringify(name)} would submit and is refused; use send --submit to submit text`,
    };
  }
  return { bytes };
}

function lookup(key: string, opts: KeyOptions): string | undefined {
  if (key in NAMED) return NAMED[key];
  if (key in ARROWS) return (opts.applicationCursor ? "\x1bO" : "\x1b[") + ARROWS[key];
  const ctrl = /^ctrl-(.|space)$/.exec(key);
  if (ctrl) {
    // Names are trimmed, so "ctrl- " never gets here: ctrl-space is spelled out.
    const c = ctrl[1] === "space" ? " " : ctrl[1];
    if (c >= "a" && c <= "z") return String.fromCharCode(c.charCodeAt(0) - 96);
    const punct: Record<string, string> = {
      "[": "\x1b",
      "\\": "\x1c",
      "]": "\x1d",
      "^": "\x1e",
      "_": "\x1f",
      "@": "\x00",
      " ": "\x00",
    };
    return punct[c];
  }
  const alt = /^alt-(.+)$/.exec(key);
  if (alt) {
    const inner = alt[1].length === 1 ? alt[1] : lookup(alt[1], opts);
    return inner === undefined ? undefined : "\x1b" + inner;
  }
  return undefined;
}

/** Opens a bracketed paste (xterm's mode 2004: https://invisible-island.net/xterm/ctlseqs/ctlseqs.html). */
export const PASTE_START = "\x1b[200~";
/** Ends a bracketed paste. */
export const PASTE_END = "\x1b[201~";

/**
 * Strips the paste terminator from a payload so it cannot end the paste early.
 * Removing one can join the pieces around it into another (`ESC[20` +
 * terminator + `1~`), so this removes as a stack does, in one linear pass.
 */
export function stripPasteEnd(text: string): string {
  if (!text.includes(PASTE_END)) return text;
  const out: string[] = [];
  for (const ch of text) {
    out.push(ch);
    if (ch === "~" && out.length >= PASTE_END.length && out.slice(-PASTE_END.length).join("") === PASTE_END) {
      out.length -= PASTE_END.length;
    }
  }
  return out.join("");
}

/**
 * `text` as one bracketed paste: a terminator inside it is stripped, so the
 * program gets the whole text as one paste and none of it as keys.
 */
export function bracketedPaste(text: string): string {
  return `${PASTE_START}${stripPasteEnd(text)}${PASTE_END}`;
}
