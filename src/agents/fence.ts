/**
 * The untrusted-output fence around pane text handed to LLMs. The id is
 * random per call and any closing sentinel inside the body is defanged, so
 * pane output cannot end the fence early.
 *
 * A sentinel counts as one however a reader might see it: in any letter case,
 * with whitespace, control or invisible format characters (zero-width space,
 * soft hyphen, bidi marks) between any two of its characters, and with
 * full-width or small-form look-alikes of its characters.
 *
 * @module
 */

/** Characters a reader may not see: whitespace, controls, format characters. */
const GAP = String.raw`[\s\p{Cc}\p{Cf}]*`;

function variants(c: string): string {
  switch (c) {
    case "<":
      return "[<\\uFF1C\\uFE64]";
    case "/":
      return "[/\\uFF0F\\u2215\\u2044]";
    case "_":
      return "[_\\uFF3F\\uFE4D\\uFE4E\\uFE4F\\uFE33\\uFE34]";
    default: // a letter and its full-width form; the `i` flag adds upper case
      return `[${c}\\u{${(c.charCodeAt(0) + 0xfee0).toString(16)}}]`;
  }
}

/** The `<` of a closing sentinel; the lookahead spells out the rest. */
const CLOSING = new RegExp(
  variants("<") + "(?=" + [..."/untrusted_terminal_output"].map(variants).map((v) => GAP + v).join("") + ")",
  "giu",
);

/** Neutralizes every closing sentinel in `text` by escaping its `<`. */
export function defang(text: string): string {
  return text.replace(CLOSING, "&lt;");
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));
/** Random bytes drawn 4 KiB at a time: every fenced read takes 8 (one op each was a hot spot). */
const pool = new Uint8Array(4096);
let used = pool.length;

/** A fresh random fence id: 16 hex digits. */
export function fenceId(): string {
  if (used + 8 > pool.length) {
    crypto.getRandomValues(pool);
    used = 0;
  }
  let id = "";
  for (const end = used + 8; used < end; used++) id += HEX[pool[used]];
  return id;
}

/** Wraps pane text in the fence. */
export function fence(text: string, id: string = fenceId()): string {
  return `<untrusted_terminal_output id="${id}">\n${defang(text)}\n</untrusted_terminal_output>`;
}
