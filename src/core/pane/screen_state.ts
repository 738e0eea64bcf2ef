/**
 * `surface.screen`: a pane's screen as the host holds it, with colours,
 * attributes, wide characters, the alternate screen and the cursor, as one
 * ANSI string that a terminal emulator (xterm.js in `paneflow web`) replays
 * into an identical screen. `surface.read` gives text; this gives pixels.
 *
 * The worker half ({@link serializeScreen}) runs where the pane's terminal
 * lives; the main-thread half ({@link screenHandler}) is the RPC handler.
 * A caller that passes the generation it already shows as `since` gets
 * `unchanged: true` without the worker being asked, so polling a quiet pane
 * costs the host a map lookup.
 *
 * @module
 */
import { SerializeAddon } from "@xterm/addon-serialize";
import type xterm from "@xterm/headless";
import type { PanePool } from "./pool.ts";
import type { ScreenResult } from "./worker_api.ts";
import type { Registry } from "../registry.ts";
import type { Result } from "../../spec/results.ts";

/** Rows of scrollback `surface.screen` returns at most. */
export const SCREEN_SCROLLBACK_MAX = 5000;

const addons = new WeakMap<xterm.Terminal, SerializeAddon>();

/**
 * Serializes a terminal's screen and up to `scrollback` rows above it. Rows
 * older than xterm's own buffer come from `older(n)` as plain text (the
 * compact scrollback keeps no colours); they are put first.
 */
export function serializeScreen(
  term: xterm.Terminal,
  opts: { scrollback: number; generation: number; older?: (n: number) => string[] },
): ScreenResult {
  let addon = addons.get(term);
  if (!addon) {
    addon = new SerializeAddon();
    // The addon is typed against @xterm/xterm's Terminal; it uses only what headless has too.
    term.loadAddon(addon as unknown as xterm.ITerminalAddon);
    addons.set(term, addon);
  }
  const buf = term.buffer.active;
  const alternate = buf.type === "alternate";
  const own = alternate ? 0 : Math.min(opts.scrollback, buf.baseY);
  let ansi = addon.serialize({ scrollback: own, excludeAltBuffer: false });
  let scrollback = own;
  const extra = opts.scrollback - own;
  if (!alternate && extra > 0 && opts.older && own === buf.baseY) {
    const rows = opts.older(extra);
    if (rows.length) {
      // Plain rows, then a reset so no attribute leaks, then the coloured part.
      ansi = rows.map(printable).join("\r\n") + "\r\n\x1b[0m" + ansi;
      scrollback += rows.length;
    }
  }
  // deno-lint-ignore no-explicit-any
  const hidden = Boolean((term as any)._core?.coreService?.isCursorHidden);
  return {
    ansi,
    cols: term.cols,
    rows: term.rows,
    cursor: { x: buf.cursorX, y: buf.cursorY },
    cursor_visible: !hidden,
    alternate_screen: alternate,
    scrollback,
    generation: opts.generation,
  };
}

/** A stored row as it may be replayed: a control character (none should be there) becomes a space. */
function printable(row: string): string {
  let out = "";
  for (const ch of row) {
    const c = ch.charCodeAt(0);
    out += c < 0x20 || c === 0x7f ? " " : ch;
  }
  return out;
}

/** Params of `surface.screen` after validation. */
export interface ScreenParams {
  surface_id: number;
  scrollback?: number;
  since?: number;
}

/** The `surface.screen` handler. */
export async function screenHandler(
  ctx: { registry: Registry; pool: PanePool },
  p: ScreenParams,
): Promise<Result<"surface.screen">> {
  const s = ctx.registry.surface(p.surface_id);
  const base = {
    surface_id: s.id,
    title: s.title,
    exited: s.exit !== null,
    exit_code: s.exit?.exit_code ?? null,
  };
  if (p.since !== undefined && p.since === s.generation) {
    return { ...base, unchanged: true, generation: s.generation };
  }
  const scrollback = Math.max(0, Math.min(SCREEN_SCROLLBACK_MAX, p.scrollback ?? 0));
  const r = await ctx.pool.screen(s.id, scrollback);
  return { ...base, unchanged: false, ...r };
}
