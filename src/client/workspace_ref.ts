/**
 * A workspace as the CLI names it: its zero-based index (which shifts when
 * an earlier workspace closes) or its stable id `w<N>` (never reused while
 * the host runs), as `workspace.list` gives both.
 *
 * @module
 */
import { UsageError } from "../errors.ts";

/** `2` → 2, `w7` → "w7"; anything else is a usage error naming `what`. */
export function workspaceRef(text: string, what = "--workspace"): number | string {
  if (/^\d+$/.test(text)) return Number(text);
  if (/^w[1-9]\d*$/.test(text)) return text;
  throw new UsageError(`${what} takes a workspace index (0, 1, ...) or id (w1, w2, ...), not "${text}"`);
}
