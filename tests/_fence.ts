/**
 * What a reply says outside the untrusted-output fence: every string in it
 * (keys too), with each fenced block cut out. A test asserts that a pane's
 * text is not in there.
 *
 * @module
 */

const FENCED = /<untrusted_terminal_output id="[0-9a-f]{16}">\n[\s\S]*?\n<\/untrusted_terminal_output>/g;

/** The strings of `value` (a reply, an error, a tool result) with the fenced blocks removed, one a line. */
export function outsideFence(value: unknown): string {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (typeof v === "string") out.push(v.replace(FENCED, "<fenced>"));
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) {
        out.push(k);
        walk(x);
      }
    }
  };
  walk(value);
  return out.join("\n");
}
