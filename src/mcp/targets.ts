/**
 * Forgiving target resolution for the MCP bridge (SPEC §8). An LLM names a
 * pane the way it saw it: a surface_id, a name in the wrong case, the start
 * of a name, a `cmdline:`/`cwd:` selector, or a `pane://` resource URI. The
 * rules, first match wins:
 *
 * 1. `pane://<name-or-id>/content` is unwrapped to `<name-or-id>`.
 * 2. A number (also `#3`) is an exact surface_id.
 * 3. `cmdline:` and `cwd:` are the CLI's selectors ({@link matchPanes}).
 * 4. An exact name, then a case-insensitive name, then a unique
 *    case-insensitive name prefix.
 *
 * Several matches are an error that lists the candidates; no match lists
 * the panes there are. Pure given the pane list.
 *
 * @module
 */
import { matchPanes, type PaneInfo } from "../client.ts";

/** A target that names no pane or several; the message lists what there is. */
export class TargetError extends Error {
  override name = "TargetError";
  constructor(message: string, readonly candidates: PaneInfo[]) {
    super(message);
  }
}

/** `3 ("web")`, or `3` for a pane without a name. */
export function describePane(p: PaneInfo): string {
  return p.name ? `${p.surface_id} (${JSON.stringify(p.name)})` : String(p.surface_id);
}

/** The resource URI of a pane: by name when it has one, else by id. */
export function paneUri(p: PaneInfo): string {
  return `pane://${encodeURIComponent(p.name ?? String(p.surface_id))}/content`;
}

const URI = /^pane:\/\/([^/]+)(?:\/content)?\/?$/;

function listing(panes: PaneInfo[]): string {
  if (panes.length === 0) return "there are no panes";
  return `panes: ${panes.map(describePane).join(", ")}`;
}

function ambiguous(target: string, how: string, found: PaneInfo[]): TargetError {
  return new TargetError(
    `Target "${target}" is ambiguous: ${how} ${found.length} panes: ${found.map(describePane).join(", ")}; ` +
      `pass a surface_id or the full name`,
    found,
  );
}

/** Resolves `target` to exactly one pane or throws a {@link TargetError}. */
export function resolveTarget(target: string | number, panes: PaneInfo[]): PaneInfo {
  let t = String(target).trim();
  const uri = URI.exec(t);
  if (uri) {
    try {
      t = decodeURIComponent(uri[1]);
    } catch {
      t = uri[1];
    }
  }
  if (t === "") throw new TargetError(`Empty target; ${listing(panes)}`, panes);
  if (/^#?\d+$/.test(t)) {
    const id = Number(t.replace("#", ""));
    const hit = panes.find((p) => p.surface_id === id);
    if (hit) return hit;
    // A pane may be named with digits only; fall through to names.
  }
  if (t.startsWith("cmdline:") || t.startsWith("cwd:")) {
    let found: PaneInfo[];
    try {
      found = matchPanes(t, panes);
    } catch (e) {
      throw new TargetError(`${(e as Error).message}; ${listing(panes)}`, panes);
    }
    if (found.length === 1) return found[0];
    if (found.length > 1) throw ambiguous(t, "the selector matches", found);
    throw new TargetError(`No pane matches "${t}"; ${listing(panes)}`, panes);
  }
  const exact = panes.filter((p) => p.name === t);
  if (exact.length === 1) return exact[0];
  const lower = t.toLowerCase();
  const folded = panes.filter((p) => p.name?.toLowerCase() === lower);
  if (folded.length === 1) return folded[0];
  if (folded.length > 1) throw ambiguous(t, "it names", folded);
  const prefixed = panes.filter((p) => p.name?.toLowerCase().startsWith(lower));
  if (prefixed.length === 1) return prefixed[0];
  if (prefixed.length > 1) throw ambiguous(t, "it is the start of the names of", prefixed);
  throw new TargetError(`No pane matches "${t}"; ${listing(panes)}`, panes);
}
