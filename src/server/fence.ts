/**
 * The untrusted-output fence around pane text handed to LLMs. The id is
 * random per call and any closing sentinel inside the body is defanged, so
 * pane output cannot end the fence early.
 *
 * @module
 */

const CLOSING = /<(\s*)\/(\s*)untrusted_terminal_output/gi;

/** Neutralizes every closing sentinel in `text`. */
export function defang(text: string): string {
  return text.replace(CLOSING, "&lt;$1/$2untrusted_terminal_output");
}

/** A fresh random fence id. */
export function fenceId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Wraps pane text in the fence. */
export function fence(text: string, id: string = fenceId()): string {
  return `<untrusted_terminal_output id="${id}">\n${defang(text)}\n</untrusted_terminal_output>`;
}
