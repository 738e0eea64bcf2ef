/**
 * Terminal key sequences both key vocabularies share: paneflow's (`paneflow
 * key`, src/core/pane/keys.ts) and ptywright's (`session.input` keys,
 * ./ptywright.ts). xterm's defaults for a TERM=xterm-256color terminal.
 *
 * @module
 */

/** F1–F12. */
export const FUNCTION_KEYS: Readonly<Record<string, string>> = {
  f1: "\x1bOP",
  f2: "\x1bOQ",
  f3: "\x1bOR",
  f4: "\x1bOS",
  f5: "\x1b[15~",
  f6: "\x1b[17~",
  f7: "\x1b[18~",
  f8: "\x1b[19~",
  f9: "\x1b[20~",
  f10: "\x1b[21~",
  f11: "\x1b[23~",
  f12: "\x1b[24~",
};
