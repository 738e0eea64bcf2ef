/**
 * Which engine a new pane's terminal gets (./engine.ts).
 *
 * @module
 */
import type { EngineKind, EngineSize, PaneEngine } from "./engine.ts";
import { XtermEngine } from "./xterm_engine.ts";

/** Makes whatever `kind` needs before its first pane ready (once per worker). */
export function prepareEngine(_kind: EngineKind): Promise<void> | null {
  return null;
}

/** A new terminal of engine `kind` (ready: see {@link prepareEngine}). */
export function createEngine(kind: EngineKind, size: EngineSize): PaneEngine {
  switch (kind) {
    case "xterm":
      return new XtermEngine(size);
    default:
      throw new Error(`Unknown terminal engine "${kind}"`);
  }
}
