/**
 * Named keys as the typist presses them (../core/pane/keys.ts has the names
 * and their bytes).
 *
 * @module
 */
import { keyBytes } from "../core/pane/keys.ts";

/**
 * How a named key is pressed: `keystroke` as `send_keystroke` does (a key
 * that would submit is refused), `answer` as the answer to an agent's dialog
 * (`enter` picks the option, so it is a carriage return).
 */
export type Press = "keystroke" | "answer";

/** The bytes of key `name` pressed as `as` (arrows as the cursor mode says), or what is wrong with the name. */
export function pressed(
  name: string,
  as: Press,
  modes: { application_cursor: boolean } = { application_cursor: false },
): { bytes: string } | { error: string } {
  if (as === "answer" && name === "enter") return { bytes: "\r" };
  return keyBytes(name, { applicationCursor: modes.application_cursor });
}
