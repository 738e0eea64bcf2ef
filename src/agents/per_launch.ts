/**
 * Per-launch hooks: an agent started by paneflow (`agent = "claude"` in `up`
 * or a flow) reports its lifecycle even when the user never ran `paneflow
 * hooks setup`. Claude Code takes an extra settings file (`--settings`);
 * Codex takes a `notify` program (`-c notify=[...]`). The files live next to
 * the host's socket and are removed when the pane closes. Gemini CLI and
 * opencode have no per-launch hook surface that paneflow can rely on: their
 * state comes from process detection.
 *
 * @module
 */
import { HOOK_EVENTS, hookStatus, MARKER } from "./claude_settings.ts";
import { shQuote } from "../sh.ts";

/** What to add to an agent's command line, and what to remove afterwards. */
export interface LaunchHooks {
  /** Appended to the launcher command. */
  suffix: string;
  /** Files to delete when the pane closes. */
  files: string[];
}

function claudeSettingsFile(env: Record<string, string | undefined>): string {
  const dir = env.CLAUDE_CONFIG_DIR ?? `${env.HOME ?? "."}/.claude`;
  return `${dir}/settings.json`;
}

/**
 * Per-launch hooks for `agent`, or null when it has none (or when Claude
 * Code already has paneflow's persistent hooks, which would fire twice).
 */
export function launchHooks(
  agent: string,
  opts: { dir: string; self: string[]; env: Record<string, string | undefined>; id: string },
): LaunchHooks | null {
  const self = opts.self.map(shQuote).join(" ");
  if (agent === "claude") {
    try {
      const current = JSON.parse(Deno.readTextFileSync(claudeSettingsFile(opts.env)));
      if (hookStatus(current).every((h) => h.command)) return null;
    } catch { /* no settings, or unreadable: add ours */ }
    const hooks: Record<string, unknown> = {};
    for (const event of HOOK_EVENTS) {
      hooks[event] = [{
        hooks: [{ type: "command", command: `${self} ai-hook ${event} ${MARKER}`, timeout: 10 }],
      }];
    }
    const file = `${opts.dir}/claude-hooks-${opts.id}.json`;
    Deno.writeTextFileSync(file, JSON.stringify({ hooks }, null, 2), { mode: 0o600 });
    return { suffix: ` --settings ${shQuote(file)}`, files: [file] };
  }
  if (agent === "codex") {
    const argv = [...opts.self, "ai-hook", "--tool", "codex", "codex-notify"];
    return { suffix: ` -c ${shQuote(`notify=${JSON.stringify(argv)}`)}`, files: [] };
  }
  return null;
}
