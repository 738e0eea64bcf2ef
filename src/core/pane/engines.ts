/**
 * Which engine a new pane's terminal gets (./engine.ts).
 *
 * @module
 */
import type { EngineKind, EngineSize, PaneEngine } from "./engine.ts";
import { XtermEngine } from "./xterm_engine.ts";
import { GhosttyEngine, prepareGhostty } from "./ghostty_engine.ts";

/** Makes what `kind` needs before its first pane ready (once per worker); null: nothing to wait for. */
export function prepareEngine(kind: EngineKind): Promise<void> | null {
  return kind === "ghostty" ? prepareGhostty() : null;
}

/** A new terminal of engine `kind` (ready: see {@link prepareEngine}). */
export function createEngine(kind: EngineKind, size: EngineSize): PaneEngine {
  return kind === "ghostty" ? new GhosttyEngine(size) : new XtermEngine(size);
}
