/**
 * Selector resolution, in one place (SPEC §3): a number is an exact
 * surface_id; `cmdline:<substr>` matches the foreground argv; `cwd:<path>`
 * the pane's working directory; anything else is an exact pane name.
 * Selectors search all workspaces.
 *
 * @module
 */
import type { Client } from "./client.ts";
import { CliFailure, UsageError } from "./errors.ts";
import { ExitCode } from "./spec/codes.ts";

/** The pane fields selectors look at (a `surface.list` item). */
export interface PaneInfo {
  surface_id: number;
  name: string | null;
  cmd: string;
  cwd: string;
  workspace: number;
  title?: string;
  [k: string]: unknown;
}

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
  const { surfaces } = await client.call<{ surfaces: PaneInfo[] }>("surface.list");
  return surfaces;
}

/**
 * Resolves a selector to one surface_id. A number is passed through without
 * a round trip: the host answers "not found" (exit 3) itself.
 */
export async function resolveOne(client: Client, selector: string): Promise<number> {
  if (/^\d+$/.test(selector)) return Number(selector);
  return pickOne(selector, await listPanes(client)).surface_id;
}

/** Resolves a selector that may match several panes; none is exit 3. */
export async function resolveMany(client: Client, selector: string): Promise<PaneInfo[]> {
  const found = matchPanes(selector, await listPanes(client));
  if (found.length === 0) throw new CliFailure(`No pane matches "${selector}"`, ExitCode.NotFound);
  return found;
}
