/**
 * A pane's shell and base environment, in one place: the registry starts
 * panes with them, and `up` plans and wraps programs with the same ones.
 *
 * @module
 */
import type { Config } from "../../spec/config.ts";

/** The shell a pane runs (or runs its command with): the config's, else $SHELL, else /bin/sh. */
export function paneShell(config: Config): string {
  return config.terminal.shell ?? Deno.env.get("SHELL") ?? "/bin/sh";
}

/** The environment every pane starts from: the host's, then the config's `terminal.env`. */
export function paneBaseEnv(config: Config): Record<string, string> {
  return { ...Deno.env.toObject(), ...config.terminal.env };
}
