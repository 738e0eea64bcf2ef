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
import type { PanePool } from "./pool.ts";
import type { ScreenResult } from "./worker_api.ts";
import type { Registry } from "../registry.ts";
import type { Result } from "../../spec/results.ts";
import type { PaneEngine } from "./engine.ts";

/** Rows of scrollback `surface.screen` returns at most. */
export const SCREEN_SCROLLBACK_MAX = 5000;

/** Serializes a pane's screen and up to `scrollback` rows above it (the engine's `serialize`). */
export function serializeScreen(engine: PaneEngine, scrollback: number, generation: number): ScreenResult {
  const out = engine.serialize(scrollback);
  const buf = engine.active;
  return {
    ansi: out.ansi,
    cols: engine.cols,
    rows: engine.rows,
    cursor: { x: buf.cursorX, y: buf.cursorY },
    cursor_visible: !engine.modes().cursorHidden,
    alternate_screen: buf.type === "alternate",
    scrollback: out.scrollback,
    generation,
  };
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
