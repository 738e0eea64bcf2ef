/**
 * Selectors (docs/cli.md), in one place for the CLI, flows and the MCP bridge.
 *
 * Strict mode (the CLI): a number is an exact surface_id; `cmdline:<substr>`
 * matches the foreground argv; `cwd:<path>` the pane's working directory;
 * anything else is an exact pane name. Selectors search all workspaces.
 *
 * Forgiving mode (the MCP bridge, docs/mcp.md): an LLM names a
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
import { CliFailure, UsageError } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import type { Result } from "../spec/results.ts";
import type { Client } from "./client.ts";

/** A pane as `surface.list` describes it. */
export type PaneInfo = Result<"surface.list">["surfaces"][number];

function normalizeDir(path: string): string {
  let p = path;
  if (p.startsWith("~/") || p === "~") p = (Deno.env.get("HOME") ?? "") + p.slice(1);
  if (!p.startsWith("/")) p = `${Deno.cwd()}/${p}`;
  try {
    p = Deno.realPathSync(p);
  } catch { /* keep as given */ }
  return p.length > 1 ? p.replace(/\/+$/, "") : p;
}

/** Panes matching a selector; pure given the pane list. */
export function matchPanes(selector: string, panes: PaneInfo[]): PaneInfo[] {
  if (selector === "") throw new UsageError("Empty selector");
  if (/^\d+$/.test(selector)) return panes.filter((p) => p.surface_id === Number(selector));
  if (selector.startsWith("cmdline:")) {
    const needle = selector.slice("cmdline:".length);
    if (!needle) throw new UsageError(`Selector "cmdline:" needs a substring`);
    return panes.filter((p) => p.cmd.includes(needle));
  }
  if (selector.startsWith("cwd:")) {
    const dir = selector.slice("cwd:".length);
    if (!dir) throw new UsageError(`Selector "cwd:" needs a path`);
    const want = normalizeDir(dir);
    return panes.filter((p) => p.cwd === want);
  }
  return panes.filter((p) => p.name === selector);
}

function describe(p: PaneInfo): string {
  return `${p.surface_id}${p.name ? ` (${p.name})` : ""}`;
}

/** Exactly one pane for a selector; exit 3 for none or several. */
export function pickOne(selector: string, panes: PaneInfo[]): PaneInfo {
  const found = matchPanes(selector, panes);
  if (found.length === 0) {
    throw new CliFailure(`No pane matches "${selector}"`, ExitCode.NotFound);
  }
  if (found.length > 1) {
    throw new CliFailure(
      `Selector "${selector}" matches ${found.length} panes: ${found.map(describe).join(", ")}`,
      ExitCode.NotFound,
    );
  }
  return found[0];
}

/** Lists every pane of the host. */
export async function listPanes(client: Client): Promise<PaneInfo[]> {
  const { surfaces } = await client.call("surface.list");
  return surfaces;
}

/**
 * Resolves a selector to one surface_id. A number is passed through without
 * a round trip: the host answers "not found" (exit 3) itself. Ids start at 1.
 */
export async function resolveOne(client: Client, selector: string): Promise<number> {
  if (/^\d+$/.test(selector)) {
    const id = Number(selector);
    if (id >= 1 && Number.isSafeInteger(id)) return id;
    throw new CliFailure(`No pane with surface_id ${selector}`, ExitCode.NotFound);
  }
  return pickOne(selector, await listPanes(client)).surface_id;
}

/** Resolves a selector that may match several panes; none is exit 3. */
export async function resolveMany(client: Client, selector: string): Promise<PaneInfo[]> {
  const found = matchPanes(selector, await listPanes(client));
  if (found.length === 0) throw new CliFailure(`No pane matches "${selector}"`, ExitCode.NotFound);
  return found;
}

/** A target that names no pane or several; the message lists what there is. */
export class TargetError extends Error {
  override name = "TargetError";
  constructor(message: string, readonly candidates: PaneInfo[], options?: ErrorOptions) {
    super(message, options);
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
      throw new TargetError(`${(e as Error).message}; ${listing(panes)}`, panes, { cause: e });
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

/** Exactly one pane for `target`: strict (the CLI's rules, exit 3) or forgiving (the MCP bridge's). */
export function selectPane(
  target: string | number,
  panes: PaneInfo[],
  opts: { forgiving?: boolean } = {},
): PaneInfo {
  return opts.forgiving ? resolveTarget(target, panes) : pickOne(String(target), panes);
}
