/**
 * Per-launch hooks: an agent started by paneflow (`agent = "claude"` in `up`
 * or a flow) reports its lifecycle even when the user never ran `paneflow
 * hooks setup`. Claude Code takes an extra settings file (`--settings`);
 * Codex takes a `notify` program (`-c notify=[...]`); Gemini CLI a
 * system-defaults settings file (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`), whose
 * hooks Gemini concatenates with the user's. The files live next to the
 * host's socket (Gemini's: in a directory Gemini accepts, see
 * {@link secureDirProblem}) and are removed when the pane closes. opencode
 * gets paneflow's plugin (`opencode_plugin.ts`) through `OPENCODE_CONFIG_CONTENT`
 * (`{"plugin": ["file://…"]}`), which opencode merges last and whose `plugin`
 * list it appends to the user's. Qwen Code takes a system-defaults settings
 * file too (`QWEN_CODE_SYSTEM_DEFAULTS_PATH`), with no ownership check, and
 * concatenates its `hooks` with the user's.
 *
 * @module
 */
import { parse as parseJsonc, type ParseError } from "jsonc-parser";
import { HOOK_EVENTS, hookStatus, installHooks, MARKER } from "./claude_settings.ts";
import { GEMINI_HOOK_EVENTS, hookSpecs, QWEN_HOOK_EVENTS } from "./agent_hooks.ts";
import { isPaneflowPlugin, opencodePluginFile, opencodePluginSource } from "./opencode_plugin.ts";
import { shQuote } from "../sh.ts";

/** What to add to an agent's command line, and what to remove afterwards. */
export interface LaunchHooks {
  /** Appended to the launcher command. */
  suffix: string;
  /** Added to the pane's environment. */
  env?: Record<string, string>;
  /** Files to delete when the pane closes. */
  files: string[];
}

/** Per-launch hooks cannot be given to this agent here; the message says why. */
export class NoLaunchHooks extends Error {
  override name = "NoLaunchHooks";
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
  opts: {
    dir: string;
    self: string[];
    env: Record<string, string | undefined>;
    id: string;
    /** Where else Gemini's file may go when `dir` is not one Gemini accepts (the host's cache dir). */
    fallbackDirs?: string[];
    /** File ownership facts (tests). */
    fs?: StatProbe;
  },
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
  if (agent === "gemini") return geminiLaunchHooks(opts, opts.fs);
  if (agent === "opencode") return opencodeLaunchHooks(opts);
  if (agent === "qwen") return qwenLaunchHooks(opts);
  return null;
}

/**
 * Qwen Code: a copy of the system defaults the pane would read, plus
 * paneflow's hooks, passed as `QWEN_CODE_SYSTEM_DEFAULTS_PATH` (Qwen Code
 * 0.24 concatenates each `hooks.<Event>` list of system defaults, system and
 * user settings). Skipped (null) when the user's settings already have
 * paneflow's hooks (`paneflow hooks setup --agent qwen`).
 */
function qwenLaunchHooks(opts: {
  dir: string;
  self: string[];
  env: Record<string, string | undefined>;
  id: string;
}): LaunchHooks | null {
  const spec = hookSpecs(opts.env).qwen;
  try {
    const user = JSON.parse(Deno.readTextFileSync(spec.file));
    if (hookStatus(user, QWEN_HOOK_EVENTS).every((h) => h.command)) return null;
  } catch { /* no settings, or unreadable: add ours */ }
  const current = opts.env.QWEN_CODE_SYSTEM_DEFAULTS_PATH ??
    `${(opts.env.QWEN_CODE_SYSTEM_SETTINGS_PATH ?? "/etc/qwen-code/settings.json").replace(/\/[^/]*$/, "")}` +
      "/system-defaults.json";
  let base: Record<string, unknown> = {};
  try {
    const errors: ParseError[] = [];
    const value = parseJsonc(Deno.readTextFileSync(current), errors, { allowTrailingComma: true });
    if (errors.length || !value || typeof value !== "object" || Array.isArray(value)) {
      throw new NoLaunchHooks(`${current} (Qwen Code's system defaults) does not parse; left as it is`);
    }
    base = value as Record<string, unknown>;
  } catch (e) {
    if (e instanceof NoLaunchHooks) throw e;
  }
  const self = opts.self.map(shQuote).join(" ");
  const { settings } = installHooks(
    base,
    (event) => `${self} ai-hook --tool qwen ${event}`,
    QWEN_HOOK_EVENTS,
    spec.group,
  );
  const file = `${opts.dir}/qwen-defaults-${opts.id}.json`;
  Deno.writeTextFileSync(file, JSON.stringify(settings, null, 2), { mode: 0o600 });
  return { suffix: "", env: { QWEN_CODE_SYSTEM_DEFAULTS_PATH: file }, files: [file] };
}

/**
 * opencode: paneflow's plugin in a file of its own, added by
 * `OPENCODE_CONFIG_CONTENT`. Skipped (null) when `paneflow hooks setup
 * --agent opencode` installed it (it would report twice); impossible when the
 * pane's environment already sets `OPENCODE_CONFIG_CONTENT` (ours would
 * replace the user's).
 */
function opencodeLaunchHooks(opts: {
  dir: string;
  self: string[];
  env: Record<string, string | undefined>;
  id: string;
}): LaunchHooks | null {
  try {
    if (isPaneflowPlugin(Deno.readTextFileSync(opencodePluginFile(opts.env)))) return null;
  } catch { /* not installed */ }
  if (opts.env.OPENCODE_CONFIG_CONTENT) {
    throw new NoLaunchHooks(
      "the pane sets OPENCODE_CONFIG_CONTENT, which paneflow's per-launch plugin would replace; " +
        "run `paneflow hooks setup --agent opencode` instead",
    );
  }
  const file = `${opts.dir}/opencode-plugin-${opts.id}.js`;
  Deno.writeTextFileSync(file, opencodePluginSource(opts.self), { mode: 0o600 });
  const content = JSON.stringify({ plugin: [new URL(`file://${file}`).href] });
  return { suffix: "", env: { OPENCODE_CONFIG_CONTENT: content }, files: [file] };
}

// ---------------------------------------------------------------- Gemini CLI

/** File facts {@link secureDirProblem} needs, injectable for tests. */
export interface StatProbe {
  /** uid and mode of a path (following symlinks), or null when it does not exist. */
  stat(path: string): { uid: number | null; mode: number | null } | null;
  realPath(path: string): string;
}

const realStat: StatProbe = {
  stat(path) {
    try {
      const st = Deno.statSync(path);
      return { uid: st.uid, mode: st.mode };
    } catch {
      return null;
    }
  },
  realPath: (path) => Deno.realPathSync(path),
};

function ancestors(dir: string): string[] {
  const out: string[] = [];
  for (let d = dir.replace(/\/+$/, "") || "/";; d = d.slice(0, d.lastIndexOf("/")) || "/") {
    out.push(d);
    if (d === "/") return out;
  }
}

/**
 * Why Gemini CLI 0.61 would skip a system settings file in `dir`, or null
 * when it would read it. Gemini reads `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` only
 * when the file and every directory above it (also after resolving symlinks)
 * are owned by root and writable by neither group nor others; otherwise it
 * prints a "Security Warning: Skipping system defaults file" and ignores it.
 */
export function secureDirProblem(dir: string, fs: StatProbe = realStat): string | null {
  let real = dir;
  try {
    real = fs.realPath(dir);
  } catch { /* checked below */ }
  for (const d of new Set([...ancestors(dir), ...ancestors(real)])) {
    const st = fs.stat(d);
    if (!st) return `${d} does not exist`;
    if (st.uid !== 0) return `${d} is not owned by root`;
    if (st.mode !== null && (st.mode & 0o022) !== 0) return `${d} is writable by group or others`;
  }
  return null;
}

/** The system-defaults file Gemini would read in this environment (GEMINI_CLI_SYSTEM_DEFAULTS_PATH or its default). */
export function geminiSystemDefaultsPath(env: Record<string, string | undefined>): string {
  if (env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH) return env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH;
  const settings = env.GEMINI_CLI_SYSTEM_SETTINGS_PATH || "/etc/gemini-cli/settings.json";
  return `${settings.slice(0, settings.lastIndexOf("/")) || "/"}/system-defaults.json`;
}

/**
 * The system defaults the pane would have read without us: the file's object
 * when Gemini would read it (it exists, parses, and passes Gemini's ownership
 * check), else `{}`.
 */
function currentSystemDefaults(path: string, fs: StatProbe): Record<string, unknown> {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return {};
  }
  const slash = path.lastIndexOf("/");
  if (secureDirProblem(slash > 0 ? path.slice(0, slash) : "/", fs) !== null) return {};
  const st = fs.stat(path);
  if (!st || st.uid !== 0 || (st.mode !== null && (st.mode & 0o022) !== 0)) return {};
  const errors: ParseError[] = [];
  const value = parseJsonc(text, errors, { allowTrailingComma: true });
  if (errors.length || !value || typeof value !== "object" || Array.isArray(value)) {
    throw new NoLaunchHooks(`${path} (Gemini CLI's system defaults) does not parse; left as it is`);
  }
  const hooks = (value as Record<string, unknown>).hooks;
  if (hooks !== undefined && (!hooks || typeof hooks !== "object" || Array.isArray(hooks))) {
    throw new NoLaunchHooks(`"hooks" in ${path} is not an object; left as it is`);
  }
  return value as Record<string, unknown>;
}

/**
 * Gemini CLI: a copy of the system defaults the pane would read, plus
 * paneflow's hooks, passed as `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`. Gemini merges
 * `hooks` from system defaults, user, workspace and system settings by
 * concatenation, so the user's own hooks still run and their settings.json
 * is not touched. Skipped (null) when the user's settings already have
 * paneflow's hooks (`paneflow hooks setup --agent gemini`); impossible
 * ({@link NoLaunchHooks}) when no directory passes Gemini's ownership check,
 * which needs a host running as root.
 */
function geminiLaunchHooks(opts: {
  dir: string;
  self: string[];
  env: Record<string, string | undefined>;
  id: string;
  fallbackDirs?: string[];
}, fs: StatProbe = realStat): LaunchHooks | null {
  const spec = hookSpecs(opts.env).gemini;
  try {
    const user = JSON.parse(Deno.readTextFileSync(spec.file));
    if (hookStatus(user, GEMINI_HOOK_EVENTS).every((h) => h.command)) return null;
  } catch { /* no settings, or unreadable: add ours */ }
  const problems: string[] = [];
  let dir: string | null = null;
  for (const candidate of [opts.dir, ...(opts.fallbackDirs ?? [])]) {
    try {
      Deno.mkdirSync(candidate, { recursive: true, mode: 0o700 });
    } catch { /* reported by the check */ }
    const problem = secureDirProblem(candidate, fs);
    if (problem === null) {
      dir = candidate;
      break;
    }
    problems.push(problem);
  }
  if (dir === null) {
    throw new NoLaunchHooks(
      "Gemini CLI reads per-launch settings only from a root-owned file in root-owned directories that " +
        `nobody else can write (${problems.join("; ")}); run \`paneflow hooks setup --agent gemini\` instead`,
    );
  }
  const base = currentSystemDefaults(geminiSystemDefaultsPath(opts.env), fs);
  const self = opts.self.map(shQuote).join(" ");
  const { settings } = installHooks(
    base,
    (event) => `${self} ai-hook --tool gemini ${event}`,
    GEMINI_HOOK_EVENTS,
    spec.group,
  );
  const file = `${dir}/gemini-defaults-${opts.id}.json`;
  Deno.writeTextFileSync(file, JSON.stringify(settings, null, 2), { mode: 0o600 });
  return { suffix: "", env: { GEMINI_CLI_SYSTEM_DEFAULTS_PATH: file }, files: [file] };
}
