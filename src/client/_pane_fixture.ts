/**
 * A whole `surface.list` item for unit tests that care about a few fields.
 *
 * @module
 */
import type { PaneInfo } from "./selectors.ts";

/** A pane with every field `surface.list` sends: `fields` over quiet defaults. */
export function paneInfo(fields: Partial<PaneInfo> & { surface_id: number }): PaneInfo {
  return {
    name: null,
    title: "",
    cwd: "/tmp",
    cmd: "sh",
    argv: ["sh"],
    workspace: 0,
    pid: 1000 + fields.surface_id,
    focused: false,
    cols: 80,
    rows: 24,
    output_generation: 0,
    exited: false,
    exit_code: null,
    exit_signal: null,
    ...fields,
  };
}
