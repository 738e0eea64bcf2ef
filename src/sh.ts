/**
 * Quoting for POSIX sh, in one place: the setup wrapper, the hook commands
 * written into agents' settings, the build's launchers and the demo.
 *
 * @module
 */

/** Quotes one argument for sh; a word of only safe characters stays bare. */
export function shQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`;
}
