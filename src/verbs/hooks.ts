import {
  HOOK_AGENTS,
  type HookAgent,
  type HookSpec,
  hookSpecs,
  withCodexNotify,
  withoutCodexNotify,
} from "../agents/agent_hooks.ts";
import {
  HOOK_EVENTS,
  hooksShapeProblem,
  hookStatus,
  installHooks,
  removeHooks,
} from "../agents/claude_settings.ts";
import { isPaneflowPlugin, OPENCODE_PLUGIN_MARKER, opencodePluginSource } from "../agents/opencode_plugin.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { readConfigText, readJsonObject, writeAtomic } from "../json_file.ts";
import { selfCommand } from "../paths.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { shQuote } from "../sh.ts";

/** Claude Code's user settings file (honours CLAUDE_CONFIG_DIR). */
export function claudeSettingsPath(): string {
  const dir = Deno.env.get("CLAUDE_CONFIG_DIR") ?? `${Deno.env.get("HOME") ?? "."}/.claude`;
  return `${dir}/settings.json`;
}

/** The command an agent runs for `event` (Claude Code's without `--tool`, as before). */
export function hookCommand(event: string, agent: HookAgent = "claude"): string {
  const tool = agent === "claude" ? [] : ["--tool", agent];
  return selfCommand(["ai-hook", ...tool, event]).map(shQuote).join(" ");
}

/** The agents to act on: `--agent`, else every agent whose config dir exists (Claude Code when none does). */
function chosen(agentOpt: string | undefined, specs: Record<HookAgent, HookSpec>): HookSpec[] {
  if (agentOpt !== undefined) {
    const names = agentOpt.split(",").map((s) => s.trim()).filter(Boolean);
    for (const n of names) {
      if (!(HOOK_AGENTS as readonly string[]).includes(n)) {
        throw new UsageError(`Unknown agent "${n}" for --agent; use ${HOOK_AGENTS.join(", ")}`);
      }
    }
    return names.map((n) => specs[n as HookAgent]);
  }
  const present = HOOK_AGENTS.map((a) => specs[a]).filter((s) => {
    try {
      return Deno.statSync(s.dir).isDirectory;
    } catch {
      return false;
    }
  });
  return present.length ? present : [specs.claude];
}

interface AgentResult {
  agent: HookAgent;
  file: string;
  exists?: boolean;
  changed?: boolean;
  events?: { event: string; command: string | null }[];
  installed?: boolean;
  notify?: { file: string; installed: boolean; users_own: boolean; changed?: boolean };
  note?: string;
  settings?: unknown;
}

/**
 * opencode: the plugin file is paneflow's own (its first line is the marker); a file of that name
 * without the marker is the user's and is never touched. Setup writes it atomically (the previous
 * version kept as .bak); uninstall keeps a .bak and removes it. The user's opencode.json is not read.
 */
async function runPlugin(
  spec: HookSpec,
  action: string,
  dryRun: boolean,
): Promise<{ result: AgentResult; lines: string[] }> {
  const path = spec.file;
  const current = await readConfigText(path);
  const ours = current.exists && isPaneflowPlugin(current.text);
  if (current.exists && !ours) {
    throw new CliFailure(
      `Refusing to ${action === "status" ? "read" : "edit"} ${path}: it is not paneflow's plugin ` +
        `(its first line is not "${OPENCODE_PLUGIN_MARKER}"); move it away first`,
    );
  }
  const source = opencodePluginSource(selfCommand([]));
  const result: AgentResult = { agent: spec.agent, file: path };
  const lines: string[] = [];
  if (action === "status") {
    const command = ours ? hookCommand("<event>", "opencode") : null;
    Object.assign(result, {
      exists: current.exists,
      events: spec.events.map((event) => ({ event, command })),
      installed: ours,
    });
    const outdated = ours && current.text !== source ? " (an older version: run setup again)" : "";
    lines.push(`${path}: paneflow's opencode plugin ${ours ? "installed" : "not installed"}${outdated}`);
    for (const e of spec.events) lines.push(`  ${ours ? "✓" : "✗"} ${e}`);
    return { result, lines };
  }
  const text = action === "setup" ? source : null;
  const changed = action === "setup" ? current.text !== source : ours;
  result.changed = changed;
  if (dryRun) {
    if (!changed) lines.push(`${path}: no change`);
    else lines.push(text === null ? `Would remove ${path}` : `Would write ${path}:\n${text}`);
    return { result, lines };
  }
  if (changed && text !== null) await writeAtomic(path, text, { backup: current.exists });
  if (changed && text === null) {
    await Deno.copyFile(path, `${path}.bak`);
    await Deno.remove(path);
  }
  const what = action === "setup" ? "installed" : "removed";
  lines.push(changed ? `paneflow's opencode plugin ${what}: ${path}` : `${path}: already up to date`);
  if (action === "setup" && spec.note) {
    result.note = spec.note;
    lines.push(spec.note);
  }
  return { result, lines };
}

type ConfigText = Awaited<ReturnType<typeof readConfigText>>;
type Notify = { text: string; changed: boolean; kept?: boolean };

/** `hooks status` for one settings-file agent: which hooks (and Codex's notify) are paneflow's. */
function statusOne(
  spec: HookSpec,
  { data, exists }: { data: Record<string, unknown>; exists: boolean },
  toml: ConfigText | null,
  notifyArgv: string[],
): { result: AgentResult; lines: string[] } {
  const lines: string[] = [];
  const status = hookStatus(data, spec.events);
  const installed = status.filter((s) => s.command).length;
  const result: AgentResult = { agent: spec.agent, file: spec.file };
  Object.assign(result, { exists, events: status, installed: installed === status.length });
  lines.push(`${spec.file}: ${installed}/${status.length} paneflow hooks installed`);
  for (const s of status) lines.push(`  ${s.command ? "✓" : "✗"} ${s.event}`);
  if (spec.notifyFile && toml) {
    const probe = withCodexNotify(toml.text, notifyArgv);
    const ours = !probe.kept && !probe.changed;
    result.notify = { file: spec.notifyFile, installed: ours, users_own: probe.kept };
    lines.push(
      `${spec.notifyFile}: notify ${
        ours ? "is paneflow's" : probe.kept ? "is your own (left alone)" : "not set"
      }`,
    );
  }
  return { result, lines };
}

/** Codex's notify line after setup or uninstall, refused if config.toml would no longer parse. */
async function planNotify(
  spec: HookSpec,
  action: string,
  toml: ConfigText,
  notifyArgv: string[],
  result: AgentResult,
): Promise<Notify> {
  const notify: Notify = action === "setup"
    ? withCodexNotify(toml.text, notifyArgv)
    : withoutCodexNotify(toml.text);
  if (notify.changed) {
    // Never write a config.toml Codex could not read.
    const { parse } = await import("smol-toml");
    try {
      parse(notify.text);
    } catch (e) {
      throw new CliFailure(
        `Refusing to edit ${spec.notifyFile}: ${(e as Error).message.split("\n")[0]}`,
        undefined,
        { cause: e },
      );
    }
  }
  result.notify = {
    file: spec.notifyFile!,
    installed: action === "setup" && !notify.kept,
    users_own: notify.kept ?? false,
    changed: notify.changed,
  };
  return notify;
}

async function runOne(
  spec: HookSpec,
  action: string,
  dryRun: boolean,
): Promise<{ result: AgentResult; lines: string[] }> {
  if (spec.plugin) return runPlugin(spec, action, dryRun);
  const path = spec.file;
  const { data, exists } = await readJsonObject(path);
  const problem = hooksShapeProblem(data);
  if (problem) {
    throw new CliFailure(
      `Refusing to ${action === "status" ? "read" : "edit"} ${path}: ${problem}; fix it first`,
    );
  }
  const notifyArgv = selfCommand(["ai-hook", "--tool", "codex", "codex-notify"]);
  const toml = spec.notifyFile ? await readConfigText(spec.notifyFile) : null;
  if (action === "status") return statusOne(spec, { data, exists }, toml, notifyArgv);
  const result: AgentResult = { agent: spec.agent, file: path };
  const lines: string[] = [];
  const { settings, changed } = action === "setup"
    ? installHooks(data, (e) => hookCommand(e, spec.agent), spec.events, spec.group)
    : removeHooks(data);
  const text = JSON.stringify(settings, null, 2) + "\n";
  result.changed = changed;
  const notify = spec.notifyFile && toml ? await planNotify(spec, action, toml, notifyArgv, result) : null;
  if (dryRun) {
    result.settings = settings;
    lines.push(changed ? `Would write ${path}:\n${text}` : `${path}: no change`);
    if (notify?.changed) lines.push(`Would write ${spec.notifyFile}:\n${notify.text}`);
    return { result, lines };
  }
  if (changed) await writeAtomic(path, text, { backup: exists });
  if (notify?.changed) await writeAtomic(spec.notifyFile!, notify.text, { backup: toml!.exists });
  const what = action === "setup" ? "installed" : "removed";
  lines.push(changed ? `paneflow hooks ${what} in ${path}` : `${path}: already up to date`);
  if (notify?.changed) lines.push(`paneflow notify ${what} in ${spec.notifyFile}`);
  if (notify?.kept) lines.push(`${spec.notifyFile}: your own notify program is kept (Codex runs only one)`);
  if (action === "setup" && spec.note) {
    result.note = spec.note;
    lines.push(spec.note);
  }
  return { result, lines };
}

export default defineVerb({
  name: "hooks",
  usage:
    "paneflow hooks <setup|status|uninstall> [--agent claude|codex|gemini|opencode|qwen] [--dry-run] [--json]",
  details: [
    "setup adds a hook (tagged `# paneflow-managed`) for each event paneflow tracks, leaving your own hooks",
    "alone; the previous file is kept as .bak and the write is atomic. uninstall removes only ours.",
    "Claude Code: $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json (" + HOOK_EVENTS.join(", ") +
    ").",
    "Codex: $CODEX_HOME/hooks.json (or ~/.codex) and its notify program in config.toml; Codex asks you once",
    "to trust new hooks. Gemini CLI: ~/.gemini/settings.json ($GEMINI_CLI_HOME honoured). opencode: a",
    "plugin, plugins/paneflow.js in $OPENCODE_CONFIG_DIR or $XDG_CONFIG_HOME/opencode (~/.config/opencode).",
    "Without --agent: every agent whose config dir exists (Claude Code when none does).",
  ].join("\n"),
  options: {
    agent: {
      type: "string",
      value: "<agent>",
      description: "claude, codex, gemini or opencode (comma-separated for several)",
    },
    "dry-run": { type: "boolean", description: "Show the change without writing" },
    json: { type: "boolean", description: "Print the result as JSON" },
  },
  positionals: [{ name: "setup|status|uninstall" }],
  async run({ opts, args }) {
    const action = args[0];
    if (!["setup", "status", "uninstall"].includes(action)) {
      throw new UsageError(`Unknown hooks action "${action}"; use setup, status or uninstall`);
    }
    const specs = chosen(opts.agent as string | undefined, hookSpecs(Deno.env.toObject()));
    const results: AgentResult[] = [];
    for (const spec of specs) {
      const { result, lines } = await runOne(spec, action, !!opts["dry-run"]);
      results.push(result);
      if (!opts.json) { for (const l of lines) console.log(l); }
    }
    if (opts.json) {
      // One agent: the object as before; several: a list.
      const strip = (r: AgentResult) => {
        const { agent: _a, ...rest } = r;
        return specs.length === 1 ? rest : r;
      };
      printJson(specs.length === 1 ? strip(results[0]) : results);
    }
    return 0;
  },
});
