/**
 * Where each agent keeps its lifecycle hooks, which events paneflow installs
 * there, and in which shape. Claude Code: `settings.json` hooks. Codex:
 * `$CODEX_HOME/hooks.json` (the same shape; Codex runs new or changed hooks
 * only after the user trusts them in its "Hooks need review" dialog) plus the
 * `notify` program in config.toml (one per user; an existing one of the
 * user's is left alone). Gemini CLI: `settings.json` hooks (`timeout` in ms,
 * a `name` per handler). opencode: a plugin module of paneflow's own in
 * `plugins/` of its config dir (`opencode_plugin.ts`). Qwen Code: Claude Code's
 * shape and event names in `~/.qwen/settings.json`. Pure; `src/verbs/hooks.ts`
 * does the I/O.
 *
 * @module
 */
import { HOOK_EVENTS, type HookGroup, MARKER } from "./claude_settings.ts";
import { OPENCODE_HOOK_EVENTS, opencodeConfigDir, opencodePluginFile } from "./opencode_plugin.ts";

/** Agents `paneflow hooks` manages. */
export const HOOK_AGENTS = ["claude", "codex", "gemini", "opencode", "qwen"] as const;
/** One of {@link HOOK_AGENTS}. */
export type HookAgent = (typeof HOOK_AGENTS)[number];

/** Codex's hook events paneflow listens to (it has no SessionEnd or Notification). */
export const CODEX_HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "Stop",
] as const;

/** Gemini CLI's hook events paneflow listens to. */
export const GEMINI_HOOK_EVENTS = [
  "SessionStart",
  "BeforeAgent",
  "BeforeTool",
  "Notification",
  "AfterTool",
  "AfterAgent",
  "SessionEnd",
] as const;

/**
 * Qwen Code's hook events paneflow listens to: Claude Code's names and
 * payloads, in `~/.qwen/settings.json`.
 */
export const QWEN_HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PermissionRequest",
  "Notification",
  "Stop",
  "StopFailure",
  "SessionEnd",
] as const;

/** How one agent's hooks are kept. */
export interface HookSpec {
  agent: HookAgent;
  label: string;
  /** The agent's config dir (its presence means the agent is set up here). */
  dir: string;
  /** The JSON file holding the `hooks` object. */
  file: string;
  events: readonly string[];
  /** The matcher group for one command. */
  group: (event: string, command: string) => HookGroup;
  /** Codex: config.toml, where `notify` lives. */
  notifyFile?: string;
  /** A note for the user after setup. */
  note?: string;
  /** opencode: `file` is a plugin module of paneflow's own, not a JSON file with `hooks`. */
  plugin?: boolean;
}

type Env = Record<string, string | undefined>;

/** Every agent's hook spec, with the config-dir variables each agent honours. */
export function hookSpecs(env: Env): Record<HookAgent, HookSpec> {
  const home = env.HOME ?? ".";
  const claudeDir = env.CLAUDE_CONFIG_DIR || `${home}/.claude`;
  const codexDir = env.CODEX_HOME || `${home}/.codex`;
  const geminiDir = `${env.GEMINI_CLI_HOME || home}/.gemini`;
  const qwenDir = `${home}/.qwen`;
  return {
    claude: {
      agent: "claude",
      label: "Claude Code",
      dir: claudeDir,
      file: `${claudeDir}/settings.json`,
      events: HOOK_EVENTS,
      group: (_e, command) => ({ hooks: [{ type: "command", command, timeout: 10 }] }),
    },
    codex: {
      agent: "codex",
      label: "Codex",
      dir: codexDir,
      file: `${codexDir}/hooks.json`,
      events: CODEX_HOOK_EVENTS,
      group: (_e, command) => ({ hooks: [{ type: "command", command, timeout: 10 }] }),
      notifyFile: `${codexDir}/config.toml`,
      note: "Codex runs new or changed hooks only after you trust them: at its next start it shows " +
        '"Hooks need review"; choose "Trust all and continue" (paneflow never trusts them for you). ' +
        "Until then the notify program reports finished turns.",
    },
    gemini: {
      agent: "gemini",
      label: "Gemini CLI",
      dir: geminiDir,
      file: `${geminiDir}/settings.json`,
      events: GEMINI_HOOK_EVENTS,
      group: (event, command) => ({
        matcher: "*",
        hooks: [{ type: "command", name: `paneflow-${event}`, command, timeout: 10_000 }],
      }),
    },
    opencode: {
      agent: "opencode",
      label: "opencode",
      dir: opencodeConfigDir(env),
      file: opencodePluginFile(env),
      events: OPENCODE_HOOK_EVENTS,
      group: () => ({ hooks: [] }),
      plugin: true,
      note: "opencode loads plugins when it starts: restart running opencode sessions to report to paneflow.",
    },
    qwen: {
      agent: "qwen",
      label: "Qwen Code",
      dir: qwenDir,
      file: `${qwenDir}/settings.json`,
      events: QWEN_HOOK_EVENTS,
      group: (_e, command) => ({ matcher: "*", hooks: [{ type: "command", command, timeout: 10 }] }),
      note:
        "Qwen Code reads its settings when it starts: restart running Qwen Code sessions to report to paneflow.",
    },
  };
}

const NOTIFY_LINE = /^notify\s*=.*$/m;

/** The first table header's offset in a TOML text (top-level keys must come before it). */
function firstTable(text: string): number {
  const m = /^\s*\[/m.exec(text);
  return m ? m.index : text.length;
}

/** Codex's top-level `notify` line, whether it is ours, or null when there is none. */
export function codexNotify(toml: string): { line: string; ours: boolean } | null {
  const top = toml.slice(0, firstTable(toml));
  const m = NOTIFY_LINE.exec(top);
  return m ? { line: m[0], ours: m[0].includes(MARKER) } : null;
}

/**
 * config.toml with our `notify` (`argv` + the JSON Codex appends), unless the
 * user has a notify of their own (`kept: true`, text unchanged).
 */
export function withCodexNotify(
  toml: string,
  argv: string[],
): { text: string; changed: boolean; kept: boolean } {
  const line = `notify = ${JSON.stringify(argv)} ${MARKER}`;
  const current = codexNotify(toml);
  if (current && !current.ours) return { text: toml, changed: false, kept: true };
  if (current?.line === line) return { text: toml, changed: false, kept: false };
  if (current) return { text: toml.replace(current.line, line), changed: true, kept: false };
  return { text: `${line}\n${toml}`, changed: true, kept: false };
}

/** config.toml without our `notify` line. */
export function withoutCodexNotify(toml: string): { text: string; changed: boolean } {
  const current = codexNotify(toml);
  if (!current?.ours) return { text: toml, changed: false };
  const at = toml.indexOf(current.line);
  const end = toml[at + current.line.length] === "\n"
    ? at + current.line.length + 1
    : at + current.line.length;
  return { text: toml.slice(0, at) + toml.slice(end), changed: true };
}
