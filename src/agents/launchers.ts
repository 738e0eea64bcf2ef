/**
 * The agent launcher table: what `agent = "<name>"` runs. Defaults for the
 * agents paneflow knows; the config's `agents.<name>.command` overrides them
 * and adds new names. No dependencies: the CLI's dry run reads it too.
 *
 * @module
 */

/** Default command of each known agent (its CLI, as installed by its package). */
export const DEFAULT_LAUNCHERS: Readonly<Record<string, string>> = {
  claude: "claude",
  codex: "codex",
  opencode: "opencode",
  gemini: "gemini",
  qwen: "qwen",
  copilot: "copilot",
};

/** The launcher table: defaults, then the config's `agents.<name>.command`. */
export function launchers(config: { agents: Record<string, { command: string }> }): Record<string, string> {
  // No prototype: an agent named "constructor" or "__proto__" is unknown, not Object's.
  const table: Record<string, string> = Object.assign(Object.create(null), DEFAULT_LAUNCHERS);
  for (const [name, { command }] of Object.entries(config.agents)) table[name] = command;
  return table;
}
