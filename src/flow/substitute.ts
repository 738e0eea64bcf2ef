/**
 * Text substitution in flows: `${item}` in a `foreach` instance, and
 * `${var}` / `${var.<item>}` from captures, cut at {@link MAX_TEXT_BYTES}.
 *
 * @module
 */
import { MAX_TEXT_BYTES, TRUNCATED } from "../spec/flow.ts";

export const ITEM = /\$\{item\}/g;
export const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:\.([^}]+))?\}/g;

/** Replaces `${item}`. */
export function withItem(text: string, item: string | null): string {
  return item === null ? text : text.replace(ITEM, item);
}

/** Cuts text over {@link MAX_TEXT_BYTES} (UTF-8) and marks it. */
export function truncate(text: string): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.length <= MAX_TEXT_BYTES) return text;
  const room = MAX_TEXT_BYTES - new TextEncoder().encode(TRUNCATED).length;
  return new TextDecoder().decode(bytes.slice(0, room)).replace(/\uFFFD$/, "") + TRUNCATED;
}

/** Substitutes `${var}` and `${var.<item>}` from captures; unknown names stay as written. */
export function substitute(text: string, values: Map<string, string | Map<string, string>>): string {
  return truncate(text.replace(VAR, (whole, name: string, item?: string) => {
    if (name === "item") return whole;
    const v = values.get(name);
    if (v === undefined) return whole;
    if (typeof v === "string") return item === undefined ? v : whole;
    if (item === undefined) return [...v.entries()].map(([k, x]) => `${k}: ${x}`).join("\n");
    return v.get(item) ?? whole;
  }));
}

export function varsIn(text: string): { name: string; item?: string }[] {
  return [...text.matchAll(VAR)].filter((m) => m[1] !== "item").map((m) => ({ name: m[1], item: m[2] }));
}
