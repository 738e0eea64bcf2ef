import {
  HOOK_EVENTS,
  hooksShapeProblem,
  hookStatus,
  installHooks,
  removeHooks,
} from "../agents/claude_settings.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { readJsonObject, writeAtomic } from "../json_file.ts";
import { selfCommand } from "../paths.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { shQuote } from "../sh.ts";

/** Claude Code's user settings file (honours CLAUDE_CONFIG_DIR). */
export function claudeSettingsPath(): string {
  const dir = Deno.env.get("CLAUDE_CONFIG_DIR") ?? `${Deno.env.get("HOME") ?? "."}/.claude`;
  return `${dir}/settings.json`;
}

/** The command Claude Code runs for `event`. */
export function hookCommand(event: string): string {
  return selfCommand(["ai-hook", event]).map(shQuote).join(" ");
}

export default defineVerb({
  name: "hooks",
  summary: "Manage paneflow's lifecycle hooks in Claude Code's settings.json",
  usage: "paneflow hooks <setup|status|uninstall> [--dry-run] [--json]",
  details: [
    "setup adds a hook (tagged `# paneflow-managed`) for each of " + HOOK_EVENTS.join(", "),
    "to $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json, leaving your own hooks alone;",
    "the previous file is kept as settings.json.bak and the write is atomic. uninstall removes only ours.",
  ].join("\n"),
  options: {
    "dry-run": { type: "boolean", description: "Show the change without writing" },
    json: { type: "boolean", description: "Print the result as JSON" },
  },
  positionals: [{ name: "setup|status|uninstall" }],
  async run({ opts, args }) {
    const action = args[0];
    if (!["setup", "status", "uninstall"].includes(action)) {
      throw new UsageError(`Unknown hooks action "${action}"; use setup, status or uninstall`);
    }
    const path = claudeSettingsPath();
    const { data, exists } = await readJsonObject(path);
    const problem = hooksShapeProblem(data);
    if (problem) {
      throw new CliFailure(
        `Refusing to ${action === "status" ? "read" : "edit"} ${path}: ${problem}; fix it first`,
      );
    }
    if (action === "status") {
      const status = hookStatus(data);
      const installed = status.filter((s) => s.command).length;
      if (opts.json) {
        printJson({ file: path, exists, events: status, installed: installed === status.length });
      } else {
        console.log(`${path}: ${installed}/${status.length} paneflow hooks installed`);
        for (const s of status) console.log(`  ${s.command ? "✓" : "✗"} ${s.event}`);
      }
      return 0;
    }
    const { settings, changed } = action === "setup" ? installHooks(data, hookCommand) : removeHooks(data);
    const text = JSON.stringify(settings, null, 2) + "\n";
    if (opts["dry-run"]) {
      if (opts.json) printJson({ file: path, changed, settings });
      else if (!changed) console.log(`${path}: no change`);
      else console.log(`Would write ${path}:\n${text}`);
      return 0;
    }
    if (changed) await writeAtomic(path, text, { backup: exists });
    if (opts.json) printJson({ file: path, changed });
    else {
      const what = action === "setup" ? "installed" : "removed";
      console.log(changed ? `paneflow hooks ${what} in ${path}` : `${path}: already up to date`);
    }
    return 0;
  },
});
