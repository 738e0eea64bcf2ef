/**
 * `paneflow mcp install | status | uninstall`: registers the MCP bridge in
 * the coding agents' own config files (docs/mcp.md).
 *
 * | agent       | file                                                 | entry                           |
 * | ----------- | ---------------------------------------------------- | ------------------------------- |
 * | Claude Code | `$CLAUDE_CONFIG_DIR/.claude.json` or `~/.claude.json` | `mcpServers.paneflow` (stdio)   |
 * | Codex       | `$CODEX_HOME/config.toml` or `~/.codex/config.toml`   | `[mcp_servers.paneflow]`        |
 * | Gemini CLI  | `~/.gemini/settings.json`                             | `mcpServers.paneflow`           |
 * | opencode    | `$XDG_CONFIG_HOME/opencode/opencode.json`             | `mcp.paneflow` (`type: local`)  |
 *
 * Only agents whose config directory exists are touched. The edits are pure
 * functions (config text in, config text out) that change our entry and
 * nothing else, keeping the user's formatting and comments; the file is
 * backed up to `<file>.bak` and replaced atomically (temp file + rename).
 * A file that does not parse is never written over.
 *
 * @module
 */
import { isDeepStrictEqual } from "node:util";
import { applyEdits, modify, parse as parseJsonc, type ParseError, printParseErrorCode } from "jsonc-parser";
import { parse as parseToml, stringify as stringifyToml, TomlError } from "smol-toml";
import { writeAtomic } from "../json_file.ts";
import type { Env } from "../paths.ts";

/** The key our entry has in every agent's config. */
export const ENTRY_NAME = "paneflow";

/** The agents we know how to register with. */
export type AgentId = "claude" | "codex" | "gemini" | "opencode";

/** How to start the bridge. */
export interface BridgeCommand {
  command: string;
  args: string[];
  /** Extra environment for the bridge (e.g. a pinned PANEFLOW_SOCKET_PATH). */
  env?: Record<string, string>;
}

/** Where one agent keeps its config. */
export interface AgentConfig {
  agent: AgentId;
  /** Human name, e.g. "Claude Code". */
  label: string;
  /** The config file we edit. */
  file: string;
  /** The directory whose existence means the agent is set up here. */
  dir: string;
}

/** A config file that does not parse; we never write over one. */
export class ConfigParseError extends Error {
  override name = "ConfigParseError";
  constructor(readonly file: string, detail: string, options?: ErrorOptions) {
    super(`Cannot read ${file}: ${detail}; fix or move the file, then run the command again`, options);
  }
}

/** File-system facts {@link agentConfigs} needs, injectable for tests. */
export interface FsProbe {
  isFile(path: string): boolean;
  isDir(path: string): boolean;
}

/** The real file system. */
export const realFs: FsProbe = {
  isFile: (p) => statOr(p)?.isFile ?? false,
  isDir: (p) => statOr(p)?.isDirectory ?? false,
};

function statOr(path: string): Deno.FileInfo | null {
  try {
    return Deno.statSync(path);
  } catch {
    return null;
  }
}

/**
 * Every agent's config location, the way each agent finds it. Claude Code:
 * `$CLAUDE_CONFIG_DIR/.claude.json` when set, else `~/.claude.json` (or the
 * legacy `<config dir>/.config.json` when only that exists). Codex:
 * `$CODEX_HOME`. opencode: `$XDG_CONFIG_HOME`, and `opencode.jsonc` when
 * only that exists.
 */
export function agentConfigs(env: Env, fs: FsProbe = realFs): AgentConfig[] {
  const home = env.get("HOME") ?? "";
  const claudeEnv = env.get("CLAUDE_CONFIG_DIR");
  const claudeDir = claudeEnv || `${home}/.claude`;
  let claudeFile = `${claudeEnv || home}/.claude.json`;
  const legacy = `${claudeDir}/.config.json`;
  if (!fs.isFile(claudeFile) && fs.isFile(legacy)) claudeFile = legacy;
  const codexDir = env.get("CODEX_HOME") || `${home}/.codex`;
  const geminiDir = `${home}/.gemini`;
  const opencodeDir = `${env.get("XDG_CONFIG_HOME") || `${home}/.config`}/opencode`;
  let opencodeFile = `${opencodeDir}/opencode.json`;
  if (!fs.isFile(opencodeFile) && fs.isFile(`${opencodeDir}/opencode.jsonc`)) {
    opencodeFile = `${opencodeDir}/opencode.jsonc`;
  }
  return [
    { agent: "claude", label: "Claude Code", file: claudeFile, dir: claudeDir },
    { agent: "codex", label: "Codex", file: `${codexDir}/config.toml`, dir: codexDir },
    { agent: "gemini", label: "Gemini CLI", file: `${geminiDir}/settings.json`, dir: geminiDir },
    { agent: "opencode", label: "opencode", file: opencodeFile, dir: opencodeDir },
  ];
}

/** Whether the agent is set up on this machine: its config dir or file exists. */
export function agentPresent(cfg: AgentConfig, fs: FsProbe = realFs): boolean {
  return fs.isDir(cfg.dir) || fs.isFile(cfg.file);
}

/** The entry each agent expects for our stdio server. */
export function entryFor(agent: AgentId, cmd: BridgeCommand): Record<string, unknown> {
  const env = cmd.env && Object.keys(cmd.env).length ? cmd.env : undefined;
  switch (agent) {
    case "claude":
      return { type: "stdio", command: cmd.command, args: cmd.args, ...(env ? { env } : {}) };
    case "codex":
    case "gemini":
      return { command: cmd.command, args: cmd.args, ...(env ? { env } : {}) };
    case "opencode":
      return {
        type: "local",
        command: [cmd.command, ...cmd.args],
        enabled: true,
        ...(env ? { environment: env } : {}),
      };
  }
}

/** The key that holds the agent's MCP servers. */
function containerKey(agent: AgentId): string {
  return agent === "claude" || agent === "gemini" ? "mcpServers" : agent === "codex" ? "mcp_servers" : "mcp";
}

// ---------------------------------------------------------------- JSON

function lineCol(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before[before.length - 1].length + 1}`;
}

function parseJsonConfig(agent: AgentId, file: string, text: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  const errors: ParseError[] = [];
  // Claude Code reads plain JSON; Gemini and opencode accept comments.
  const strict = agent === "claude";
  const value = parseJsonc(text, errors, { disallowComments: strict, allowTrailingComma: !strict });
  if (errors.length) {
    const e = errors[0];
    throw new ConfigParseError(file, `${printParseErrorCode(e.error)} at ${lineCol(text, e.offset)}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ConfigParseError(file, "the top level is not a JSON object");
  }
  const servers = (value as Record<string, unknown>)[containerKey(agent)];
  if (servers !== undefined && (servers === null || typeof servers !== "object" || Array.isArray(servers))) {
    throw new ConfigParseError(file, `"${containerKey(agent)}" is not an object`);
  }
  return value as Record<string, unknown>;
}

function jsonFormatting(text: string) {
  const indent = /^([ \t]+)"/m.exec(text)?.[1] ?? "  ";
  return {
    insertSpaces: !indent.startsWith("\t"),
    tabSize: indent.startsWith("\t") ? 1 : indent.length,
    eol: text.includes("\r\n") ? "\r\n" : "\n",
  };
}

function editJson(agent: AgentId, file: string, text: string, entry: unknown): string {
  const base = text.trim() === "" ? "{}\n" : text;
  const edits = modify(base, [containerKey(agent), ENTRY_NAME], entry, {
    formattingOptions: jsonFormatting(base),
  });
  const out = applyEdits(base, edits);
  const check = parseJsonConfig(agent, file, out);
  const servers = check[containerKey(agent)] as Record<string, unknown> | undefined;
  if (!isDeepStrictEqual(servers?.[ENTRY_NAME], entry)) {
    throw new Error(`Editing ${file} did not give the expected entry`);
  }
  return out;
}

// ---------------------------------------------------------------- TOML

const KEY = String.raw`(?:[A-Za-z0-9_-]+|"(?:[^"\\\n]|\\.)*"|'[^'\n]*')`;
const HEADER = new RegExp(String.raw`^\s*\[\[?\s*${KEY}(?:\s*\.\s*${KEY})*\s*\]\]?\s*(?:#.*)?$`);
const q = (k: string) => String.raw`(?:${k}|"${k}"|'${k}')`;
const OUR_HEADER = new RegExp(
  String.raw`^\s*\[\s*${q("mcp_servers")}\s*\.\s*${q(ENTRY_NAME)}\s*(?:\.\s*${KEY}\s*)*\]\s*(?:#.*)?$`,
);

/** Plain objects and ISO date strings: smol-toml gives null-prototype tables and date objects. */
function plainToml(text: string): Record<string, unknown> {
  return JSON.parse(JSON.stringify(parseToml(text)));
}

function parseTomlConfig(file: string, text: string): Record<string, unknown> {
  try {
    const value = plainToml(text);
    const servers = value.mcp_servers;
    if (
      servers !== undefined && (servers === null || typeof servers !== "object" || Array.isArray(servers))
    ) {
      throw new ConfigParseError(file, `"mcp_servers" is not a table`);
    }
    return value;
  } catch (e) {
    if (e instanceof ConfigParseError) throw e;
    if (e instanceof TomlError) {
      throw new ConfigParseError(file, `${e.message.split("\n")[0]} at line ${e.line}, column ${e.column}`, {
        cause: e,
      });
    }
    throw new ConfigParseError(file, (e as Error).message, { cause: e });
  }
}

function tomlString(s: string): string {
  // JSON string escapes are TOML basic-string escapes, except DEL which TOML wants escaped.
  return JSON.stringify(s).replaceAll("\x7f", "\\u007F");
}

function tomlKey(k: string): string {
  return /^[A-Za-z0-9_-]+$/.test(k) ? k : tomlString(k);
}

function tomlBlock(entry: Record<string, unknown>): string {
  const lines = [`[mcp_servers.${ENTRY_NAME}]`];
  lines.push(`command = ${tomlString(entry.command as string)}`);
  lines.push(`args = [${(entry.args as string[]).map(tomlString).join(", ")}]`);
  const env = entry.env as Record<string, string> | undefined;
  if (env) {
    lines.push(
      `env = { ${Object.entries(env).map(([k, v]) => `${tomlKey(k)} = ${tomlString(v)}`).join(", ")} }`,
    );
  }
  return lines.join("\n") + "\n";
}

/** Removes our `[mcp_servers.paneflow]` tables (and their sub-tables) from the text. */
function cutOurTables(text: string): string {
  const lines = text.split("\n");
  let i = lines.findIndex((l) => OUR_HEADER.test(l));
  while (i >= 0) {
    let end = i + 1;
    while (end < lines.length && !(HEADER.test(lines[end]) && !OUR_HEADER.test(lines[end]))) end++;
    // Comments and blank lines just above the next table belong to it.
    let cut = end;
    if (end < lines.length) {
      while (cut > i + 1 && /^\s*(#.*)?\r?$/.test(lines[cut - 1])) cut--;
    }
    lines.splice(i, cut - i);
    if (i > 0 && /^\s*\r?$/.test(lines[i - 1]) && (i >= lines.length || /^\s*\r?$/.test(lines[i]))) {
      lines.splice(i - 1, 1);
    }
    i = lines.findIndex((l) => OUR_HEADER.test(l));
  }
  while (
    lines.length > 1 && /^\s*\r?$/.test(lines[lines.length - 1]) && /^\s*\r?$/.test(lines[lines.length - 2])
  ) {
    lines.pop();
  }
  const out = lines.join("\n");
  return text.endsWith("\n") && out !== "" && !out.endsWith("\n") ? out + "\n" : out;
}

function withoutEmptyServers(v: Record<string, unknown>): Record<string, unknown> {
  const out = { ...v };
  const s = out.mcp_servers as Record<string, unknown> | undefined;
  if (s && Object.keys(s).length === 0) delete out.mcp_servers;
  return out;
}

/** What a TOML edit gave: the text, and whether we had to re-serialize the whole file. */
interface TomlEdit {
  text: string;
  rewritten: boolean;
}

function withOurs<T extends Record<string, unknown>>(doc: T, entry: Record<string, unknown> | undefined): T {
  const servers = { ...(doc.mcp_servers as Record<string, unknown> | undefined) };
  if (entry) servers[ENTRY_NAME] = entry;
  else delete servers[ENTRY_NAME];
  return withoutEmptyServers({ ...doc, mcp_servers: servers }) as T;
}

function editToml(file: string, text: string, entry: Record<string, unknown> | undefined): TomlEdit {
  const expected = withOurs(parseTomlConfig(file, text), entry);
  let out = cutOurTables(text);
  if (entry) {
    if (out.trim() === "") out = "";
    else if (!out.endsWith("\n")) out += "\n\n";
    else if (!out.endsWith("\n\n")) out += "\n";
    out += tomlBlock(entry);
  }
  try {
    if (isDeepStrictEqual(withoutEmptyServers(plainToml(out)), expected)) {
      return { text: out, rewritten: false };
    }
  } catch { /* fall back below */ }
  // Our entry was written in a form the line edit cannot see (an inline table,
  // dotted keys): re-serialize the whole document. Comments are lost, so the
  // caller says so; the .bak keeps the original.
  const doc = withOurs(parseToml(text) as Record<string, unknown>, entry);
  return { text: stringifyToml(doc) + "\n", rewritten: true };
}

// ---------------------------------------------------------------- pure API

/** Our entry as found in a config text, or undefined. Throws {@link ConfigParseError}. */
export function readEntry(agent: AgentId, file: string, text: string | null): unknown {
  if (text === null) return undefined;
  const value = agent === "codex" ? parseTomlConfig(file, text) : parseJsonConfig(agent, file, text);
  const servers = value[containerKey(agent)] as Record<string, unknown> | undefined;
  return servers?.[ENTRY_NAME];
}

/** The result of a pure edit. */
export interface Edit {
  /** The new text (equal to the input when nothing changes). */
  text: string;
  changed: boolean;
  /** The whole TOML file had to be re-serialized (its comments are gone). */
  rewritten?: boolean;
}

/** Config text with our entry set to `cmd` (added or updated); everything else kept. */
export function withEntry(agent: AgentId, file: string, text: string | null, cmd: BridgeCommand): Edit {
  const entry = entryFor(agent, cmd);
  const src = text ?? "";
  if (isDeepStrictEqual(readEntry(agent, file, src), entry)) return { text: src, changed: false };
  if (agent === "codex") return { ...editToml(file, src, entry), changed: true };
  return { text: editJson(agent, file, src, entry), changed: true };
}

/** Config text without our entry; everything else kept. */
export function withoutEntry(agent: AgentId, file: string, text: string | null): Edit {
  const src = text ?? "";
  if (text === null || readEntry(agent, file, src) === undefined) return { text: src, changed: false };
  if (agent === "codex") return { ...editToml(file, src, undefined), changed: true };
  const edits = modify(src, [containerKey(agent), ENTRY_NAME], undefined, {
    formattingOptions: jsonFormatting(src),
  });
  const out = applyEdits(src, edits);
  if (readEntry(agent, file, out) !== undefined) throw new Error(`Removing our entry from ${file} failed`);
  return { text: out, changed: true };
}

// ---------------------------------------------------------------- effects

/** What happened (or would happen) to one agent's config. */
export interface AgentReport {
  agent: AgentId;
  label: string;
  file: string;
  /** Whether the agent's config dir exists. */
  present: boolean;
  /** Whether our entry is there (after the action; before it on --dry-run). */
  installed: boolean;
  /** Whether our entry runs this program's current command. */
  current: boolean;
  /** skipped (agent not set up), unchanged, added, updated, removed, error. */
  action: "skipped" | "unchanged" | "added" | "updated" | "removed" | "error";
  /** For `error`: what went wrong. */
  error?: string;
  /** A backup made before the change. */
  backup?: string;
  /** The TOML file was re-serialized, so its comments are gone (the backup has them). */
  rewritten?: boolean;
}

async function readOrNull(path: string): Promise<string | null> {
  try {
    return await Deno.readTextFile(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
}

/** Options for {@link applyAll} and {@link statusAll}. */
export interface RunOptions {
  env: Env;
  /** The bridge command to register. */
  command: BridgeCommand;
  /** Only these agents (default: all). */
  agents?: AgentId[];
  /** Report what would change; write nothing. */
  dryRun?: boolean;
  fs?: FsProbe;
}

function selected(opts: RunOptions): AgentConfig[] {
  const all = agentConfigs(opts.env, opts.fs);
  return opts.agents?.length ? all.filter((c) => opts.agents!.includes(c.agent)) : all;
}

async function applyOne(
  cfg: AgentConfig,
  mode: "install" | "uninstall",
  opts: RunOptions,
): Promise<AgentReport> {
  const present = agentPresent(cfg, opts.fs);
  const base = { agent: cfg.agent, label: cfg.label, file: cfg.file, present };
  const want = entryFor(cfg.agent, opts.command);
  if (!present) return { ...base, installed: false, current: false, action: "skipped" };
  try {
    // Re-read right before the rename so a concurrent writer (the agent
    // itself saving its state) is not overwritten with stale content.
    for (let attempt = 0;; attempt++) {
      const text = await readOrNull(cfg.file);
      const before = readEntry(cfg.agent, cfg.file, text);
      const edit = mode === "install"
        ? withEntry(cfg.agent, cfg.file, text, opts.command)
        : withoutEntry(cfg.agent, cfg.file, text);
      const installed = mode === "install";
      const action = !edit.changed
        ? "unchanged"
        : mode === "uninstall"
        ? "removed"
        : before === undefined
        ? "added"
        : "updated";
      const after = edit.changed ? (installed ? want : undefined) : before;
      const report: AgentReport = {
        ...base,
        installed: opts.dryRun ? before !== undefined : installed,
        current: isDeepStrictEqual(opts.dryRun ? before : after, want),
        action,
        ...(edit.rewritten ? { rewritten: true } : {}),
      };
      if (!edit.changed || opts.dryRun) return report;
      if ((await readOrNull(cfg.file)) !== text && attempt < 3) continue;
      if (text !== null) report.backup = `${cfg.file}.bak`;
      await writeAtomic(cfg.file, edit.text, { backup: text !== null });
      return report;
    }
  } catch (e) {
    const installed = false;
    return { ...base, installed, current: false, action: "error", error: (e as Error).message };
  }
}

/** Installs or removes our entry in every present agent's config. */
export async function applyAll(mode: "install" | "uninstall", opts: RunOptions): Promise<AgentReport[]> {
  const out: AgentReport[] = [];
  for (const cfg of selected(opts)) out.push(await applyOne(cfg, mode, opts));
  return out;
}

/** Whether each agent has our entry, and whether it runs the current command. */
export async function statusAll(opts: RunOptions): Promise<AgentReport[]> {
  const out: AgentReport[] = [];
  for (const cfg of selected(opts)) {
    const present = agentPresent(cfg, opts.fs);
    const base = { agent: cfg.agent, label: cfg.label, file: cfg.file, present };
    try {
      const entry = readEntry(cfg.agent, cfg.file, await readOrNull(cfg.file));
      out.push({
        ...base,
        installed: entry !== undefined,
        current: isDeepStrictEqual(entry, entryFor(cfg.agent, opts.command)),
        action: present ? "unchanged" : "skipped",
      });
    } catch (e) {
      out.push({ ...base, installed: false, current: false, action: "error", error: (e as Error).message });
    }
  }
  return out;
}
