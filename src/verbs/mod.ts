/**
 * The verb registry: one entry per verb with its summary and a lazy import
 * of its module, so `paneflow ls` loads only what `ls` needs and
 * `deno compile` still sees every module.
 *
 * @module
 */
import type { Verb } from "./_verb.ts";

/** A registry entry. */
export interface VerbEntry {
  name: string;
  aliases?: string[];
  summary: string;
  load: () => Promise<{ default: Verb }>;
}

// deno-lint-ignore no-explicit-any
const lazy = (p: Promise<{ default: any }>) => p as Promise<{ default: Verb }>;

/** Every verb, in help order. */
export const verbs: VerbEntry[] = [
  {
    name: "serve",
    summary: "Run the host (foreground, or --detach)",
    load: () => lazy(import("./serve.ts")),
  },
  { name: "new", summary: "Create a workspace with one pane", load: () => lazy(import("./new.ts")) },
  { name: "split", summary: "Split a pane (h: right, v: below)", load: () => lazy(import("./split.ts")) },
  {
    name: "ls",
    aliases: ["list_panes"],
    summary: "List panes (JSON; --human for a table)",
    load: () => lazy(import("./ls.ts")),
  },
  {
    name: "read",
    aliases: ["read_pane"],
    summary: "Read a pane's screen and scrollback",
    load: () => lazy(import("./read.ts")),
  },
  {
    name: "search",
    aliases: ["search_pane"],
    summary: "Search a pane's scrollback",
    load: () => lazy(import("./search.ts")),
  },
  { name: "send", summary: "Type text into a pane (gated)", load: () => lazy(import("./send.ts")) },
  { name: "key", summary: "Send one named keystroke (gated)", load: () => lazy(import("./key.ts")) },
  {
    name: "attach",
    summary: "Show a pane in this terminal and type into it (Ctrl-] detaches)",
    load: () => lazy(import("./attach.ts")),
  },
  {
    name: "wait",
    summary: "Block until panes match a pattern and/or go idle",
    load: () => lazy(import("./wait.ts")),
  },
  { name: "watch", summary: "Stream events as JSON lines", load: () => lazy(import("./watch.ts")) },
  { name: "status", summary: "Show a pane's agent state", load: () => lazy(import("./status.ts")) },
  { name: "ps", summary: "List detected agents across workspaces", load: () => lazy(import("./ps.ts")) },
  {
    name: "explain",
    summary: "Explain why a pane's agent state is what it is",
    load: () => lazy(import("./explain.ts")),
  },
  { name: "up", summary: "Bring up a workspace from a TOML spec", load: () => lazy(import("./up.ts")) },
  {
    name: "flow",
    summary: "Run or validate a multi-agent pipeline (TOML DAG)",
    load: () => lazy(import("./flow.ts")),
  },
  { name: "select", summary: "Make a workspace active", load: () => lazy(import("./select.ts")) },
  { name: "focus", summary: "Focus a pane and its workspace", load: () => lazy(import("./focus.ts")) },
  { name: "rename", summary: "Rename a pane", load: () => lazy(import("./rename.ts")) },
  { name: "close", summary: "Close a pane (SIGHUP to its program)", load: () => lazy(import("./close.ts")) },
  { name: "layout", summary: "Apply a layout to a workspace", load: () => lazy(import("./layout.ts")) },
  {
    name: "hooks",
    summary: "Install paneflow's hooks into Claude Code (setup|status|uninstall)",
    load: () => lazy(import("./hooks.ts")),
  },
  {
    name: "ai-hook",
    summary: "Lifecycle hook that agents call (always exits 0)",
    load: () => lazy(import("./ai_hook.ts")),
  },
  { name: "mcp", summary: "Serve the MCP bridge, or install it", load: () => lazy(import("./mcp.ts")) },
  {
    name: "api",
    summary: "Call a JSON-RPC method, or print the protocol schema",
    load: () => lazy(import("./api.ts")),
  },
  { name: "version", summary: "Print the version", load: () => lazy(import("./version.ts")) },
  { name: "help", summary: "Show help for paneflow or a verb", load: () => lazy(import("./help.ts")) },
];

/** Finds a verb by name or alias. */
export function findVerb(name: string): VerbEntry | undefined {
  return verbs.find((v) => v.name === name || v.aliases?.includes(name));
}

/** The top-level usage text. */
export function usage(): string {
  const width = Math.max(...verbs.map((v) => v.name.length));
  return [
    "Usage: paneflow <verb> [options]",
    "",
    "A headless terminal host for AI agents and ordinary programs.",
    "",
    "Verbs:",
    ...verbs.map((v) => `  ${v.name.padEnd(width)}  ${v.summary}`),
    "",
    "Run paneflow <verb> --help for a verb's options.",
    "Exit codes: 0 ok, 1 failure, 2 usage, 3 target not found or ambiguous, 4 timeout.",
  ].join("\n");
}
