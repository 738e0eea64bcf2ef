/**
 * The host's config file: JSONC at `$PANEFLOW_CONFIG` or
 * `~/.config/paneflow/config.jsonc`. A missing file means all defaults;
 * unknown keys and wrong types are errors naming the key and the file.
 *
 * @module
 */
import { z } from "zod";
import { configPath } from "../paths.ts";
import { parse, type ParseError, printParseErrorCode, stripComments } from "jsonc-parser";
import { PaneioConfig, QueueConfig } from "./paneio.ts";
import { CapsConfig } from "./caps.ts";
import { RestoreConfig } from "./restore.ts";
import { NotifyConfig } from "./notify.ts";
import { UsageConfig } from "./usage.ts";
import { defaultEngine, ENGINE_KINDS, type EngineKind } from "./engines.ts";

export { defaultEngine, ENGINE_KINDS, type EngineKind };

/**
 * Pane workers when the config names none: one more than the cores (at
 * least 2, at most 8). A worker whose panes someone watches rests between
 * its turns of floods; with a worker more than cores, the others use the
 * core it leaves (docs/performance.md, "Figures behind constants in the
 * code").
 */
export const DEFAULT_PANE_WORKERS = Math.min(8, Math.max(2, (navigator.hardwareConcurrency || 1) + 1));

/** Schema of the config file. */
export const ConfigSchema = z.strictObject({
  ai_unrestricted: z.boolean().default(false),
  ai_injection_fence: z.boolean().default(true),
  submit_paste_delay_ms: z.number().int().min(0).max(10_000).default(70),
  agent_stall_threshold_secs: z.number().positive().default(120),
  tmux_compat: z.boolean().default(false),
  terminal: z.strictObject({
    env: z.record(z.string(), z.string()).default({}),
    cols: z.number().int().min(2).max(1000).default(200),
    rows: z.number().int().min(2).max(1000).default(50),
    scrollback_lines: z.number().int().min(0).max(1_000_000).default(10_000),
    /** What parses a pane's output (docs/engines.md); a pane may name its own. */
    engine: z.enum(ENGINE_KINDS).default(defaultEngine),
    shell: z.string().min(1).optional(),
    /** How long a closed pane's processes have after SIGHUP before SIGKILL. */
    kill_grace_ms: z.number().int().min(0).max(60_000).default(2000),
  }).prefault({}),
  agents: z.record(z.string(), z.strictObject({ command: z.string().min(1) })).default({}),
  hosts: z.record(
    z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, "a host name is letters, digits, '.', '_' and '-'"),
    z.strictObject({
      ssh: z.string().min(1).describe("[user@]host or ssh://[user@]host[:port], as ssh takes it"),
      paneflow: z.string().min(1).default("paneflow").describe("The command that runs paneflow there"),
      socket: z.string().min(1).optional().describe("The host's socket there, when not the default"),
    }),
  ).default({}),
  host: z.strictObject({
    pane_workers: z.number().int().min(1).max(16).default(DEFAULT_PANE_WORKERS),
    idle_timeout_secs: z.number().positive().default(30),
    heartbeat_secs: z.number().positive().default(30),
  }).prefault({}),
  paneio: PaneioConfig,
  queue: QueueConfig,
  caps: CapsConfig,
  restore: RestoreConfig,
  notify: NotifyConfig,
  usage: UsageConfig,
});

/** The host's settings, every default filled in. */
export type Config = z.infer<typeof ConfigSchema>;

export { configPath } from "../paths.ts";

function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `${before.length}:${before[before.length - 1].length + 1}`;
}

/** Parses config text; throws one line naming the file and the problem. */
export function parseConfig(text: string, file: string): Config {
  const errors: ParseError[] = [];
  let raw: unknown;
  try {
    raw = parse(text, errors, { allowTrailingComma: true, disallowComments: false });
  } catch (e) {
    if (e instanceof RangeError) throw new Error(`Invalid config ${file}: nested too deeply`, { cause: e });
    throw e;
  }
  // An empty file, or one whose every line is commented out, means all defaults.
  const empty = errors.length === 1 && printParseErrorCode(errors[0].error) === "ValueExpected" &&
    stripComments(text).trim() === "";
  if (errors.length && !empty) {
    const e = errors[0];
    throw new Error(
      `Invalid config ${file}:${lineCol(text, e.offset)}: ${printParseErrorCode(e.error)}`,
    );
  }
  let result;
  try {
    result = ConfigSchema.safeParse(empty ? {} : raw);
  } catch (e) {
    // The parser fuzz found it: a value nested thousands deep overflows the stack.
    if (e instanceof RangeError) throw new Error(`Invalid config ${file}: nested too deeply`, { cause: e });
    throw e;
  }
  if (!result.success) {
    const issue = result.error.issues[0];
    // One line whatever the keys hold (a key may contain a newline or a quote).
    const quote = (key: string) => /^[^"\\\p{Cc}\p{Cf}]*$/u.test(key) ? `"${key}"` : JSON.stringify(key);
    const oneLine = (m: string) => m.replace(/[\r\n]+/g, " ");
    const at = issue.path.join(".");
    if (issue.code === "unrecognized_keys") {
      const key = [...issue.path, issue.keys[0]].join(".");
      throw new Error(`Unknown config key ${quote(key)} in ${file}`);
    }
    if (!at) throw new Error(`Invalid config ${file}: ${oneLine(issue.message)}`);
    throw new Error(`Invalid config key ${quote(at)} in ${file}: ${oneLine(issue.message)}`);
  }
  return result.data;
}

/** Reads the config file; a missing file gives the defaults. `terminal.shell` must be executable. */
export async function loadConfig(file = configPath()): Promise<Config> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return ConfigSchema.parse({});
    throw new Error(`Cannot read config ${file}: ${(e as Error).message}`, { cause: e });
  }
  const config = parseConfig(text, file);
  // Checked now, not when the first pane fails to start with it.
  const shell = config.terminal.shell;
  if (shell !== undefined) {
    const info = await Deno.stat(shell).catch(() => null);
    if (!info?.isFile || (info.mode !== null && (info.mode & 0o111) === 0)) {
      throw new Error(`Invalid config key "terminal.shell" in ${file}: ${shell} is not an executable file`);
    }
  }
  return config;
}
