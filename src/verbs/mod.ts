/**
 * The verb registry: one entry per verb with its summary (the only copy:
 * `paneflow help` lists them and a verb's `--help` shows its own) and a lazy
 * import of its module, so `paneflow ls` loads only what `ls` needs. The imports go
 * through a variable: Deno then leaves the heavy verbs (and zod, node-pty,
 * xterm) out of every start's module graph, which halves a one-shot `read`
 * (bench/). `deno task compile` names the verb modules with `--include`.
 *
 * `read` is the exception: it is imported here, with the client modules it
 * shares with every other client verb. It is the verb scripts and agents run
 * in loops, and a dynamic import costs a one-shot start ~0.5 ms beyond the
 * modules it loads (bench/); the other client verbs then load one module.
 *
 * @module
 */
import type { Verb } from "./_verb.ts";
import read from "./read.ts";

/** A registry entry. */
export interface VerbEntry {
  name: string;
  aliases?: string[];
  summary: string;
  /**
   * Its module graph holds npm packages (the host, `up`, `flow`, the MCP
   * bridge, `api`): `deno task build` leaves it in the source tree instead of
   * bundling it (scripts/build.ts reads this flag).
   */
  heavy?: true;
  load: () => Promise<{ default: Verb }>;
}

/**
 * Where the verb modules are: beside this file when it runs from source; in
 * the bundled CLI (`deno task build`: dist/cli/), which always runs through
 * its main.js, every verb is `src/verbs/<name>.js` below that. (Relative to
 * main.js, not to this code: `help` holds a copy of it in its own file.)
 */
const FROM_SOURCE = import.meta.url.endsWith(".ts");

// A specifier in a variable is not followed when the CLI starts, so the heavy
// verbs' modules (and their npm packages) stay out of every start's module graph.
function dyn(file: string): Promise<{ default: Verb }> {
  const url = FROM_SOURCE
    ? new URL(`./${file}.ts`, import.meta.url)
    : new URL(`./src/verbs/${file}.js`, Deno.mainModule);
  return import(url.href);
}

/** Every verb, in help order. */
export const verbs: VerbEntry[] = [
  {
    name: "serve",
    summary: "Run the host: owns every pane's PTY and answers JSON-RPC on the socket",
    heavy: true,
    load: () => dyn("serve"),
  },
  { name: "new", summary: "Create a workspace with one pane and make it active", load: () => dyn("new") },
  {
    name: "split",
    summary: "Split a pane: h puts the new pane to the right, v below",
    load: () => dyn("split"),
  },
  {
    name: "ls",
    aliases: ["list_panes"],
    summary: "List the panes of the active workspace (JSON; --human for a table)",
    load: () => dyn("ls"),
  },
  {
    name: "read",
    aliases: ["read_pane"],
    summary: "Read a pane's newest lines (fenced as untrusted output unless --raw)",
    load: () => Promise.resolve({ default: read as Verb }),
  },
  {
    name: "search",
    aliases: ["search_pane"],
    summary: "Search a pane's scrollback (case-insensitive substring)",
    load: () => dyn("search"),
  },
  {
    name: "send",
    summary: "Type text into a pane as-is; --submit pastes it and presses Enter (gated)",
    load: () => dyn("send"),
  },
  { name: "key", summary: "Send one named keystroke that does not submit (gated)", load: () => dyn("key") },
  {
    name: "answer",
    summary: "Answer an agent's dialog: approve, deny, or pick an option (gated)",
    load: () => dyn("answer"),
  },
  {
    name: "attach",
    summary: "Show a pane in this terminal and type into it; Ctrl-] detaches",
    load: () => dyn("attach"),
  },
  {
    name: "wait",
    summary: "Block until panes show a pattern, go idle, or both",
    load: () => dyn("wait"),
  },
  {
    name: "watch",
    summary: "Stream lifecycle and surface events as JSON lines until Ctrl-C",
    load: () => dyn("watch"),
  },
  {
    name: "ask",
    summary: "Type text into a pane and print its reply up to a marker line (gated)",
    load: () => dyn("ask"),
  },
  {
    name: "restore",
    summary:
      "Bring back the last host's workspaces, shells and agent conversations (after a crash or reboot)",
    load: () => dyn("restore"),
  },
  {
    name: "ready",
    summary: "Tell whether a pane is ready for input (exit 0 ready, 1 not ready, 4 --wait timed out)",
    load: () => dyn("ready"),
  },
  {
    name: "clear",
    summary: "Clear a pane's scrollback and screen (the cursor's line stays on top)",
    load: () => dyn("clear"),
  },
  {
    name: "msg",
    summary: "The agent message queue: send, list, show, wait for, and prune messages",
    heavy: true,
    load: () => dyn("msg"),
  },
  {
    name: "agents",
    summary: "Show the agents' status files (status/agents/<name>.yaml) of the queue",
    heavy: true,
    load: () => dyn("agents"),
  },
  {
    name: "status",
    summary: "Show one pane's agent state (a pane without an agent is idle)",
    load: () => dyn("status"),
  },
  {
    name: "ps",
    summary: "List detected agents across all workspaces (table; --json for JSON)",
    load: () => dyn("ps"),
  },
  {
    name: "usage",
    summary: "What each pane's agent spent: tokens by kind, cost, turns (--by, --since, --json)",
    load: () => dyn("usage"),
  },
  {
    name: "budget",
    summary: "Set or raise what a pane's agent (or its workspace) may spend; a spent budget refuses submits",
    load: () => dyn("budget"),
  },
  {
    name: "clients",
    summary: "List the host's connections: who holds the slots",
    load: () => dyn("clients"),
  },
  {
    name: "whoami",
    summary: "Who the host takes this process for (owner, pane, guest) and what it may do",
    load: () => dyn("whoami"),
  },
  {
    name: "caps",
    summary: "A pane's capabilities: what its programs may do, over which panes",
    load: () => dyn("caps"),
  },
  {
    name: "explain",
    summary: "Explain a pane's agent state: the last hook, the screen rule, and why",
    load: () => dyn("explain"),
  },
  { name: "up", summary: "Bring up a workspace from a TOML spec", heavy: true, load: () => dyn("up") },
  {
    name: "flow",
    summary: "Run or validate a multi-agent pipeline (a TOML DAG of steps)",
    heavy: true,
    load: () => dyn("flow"),
  },
  {
    name: "select",
    summary: "Make a workspace active (zero-based index or stable id w<N>, as workspace.list gives them)",
    load: () => dyn("select"),
  },
  { name: "focus", summary: "Focus a pane and make its workspace active", load: () => dyn("focus") },
  { name: "rename", summary: "Rename a pane (names are unique on the host)", load: () => dyn("rename") },
  {
    name: "close",
    summary: "Close a pane (its program gets SIGHUP); --workspace closes a whole workspace",
    load: () => dyn("close"),
  },
  {
    name: "layout",
    summary: "Apply a preset or a JSON split tree to a workspace",
    load: () => dyn("layout"),
  },
  {
    name: "hooks",
    summary: "Manage paneflow's lifecycle hooks in Claude Code, Codex and Gemini CLI",
    heavy: true,
    load: () => dyn("hooks"),
  },
  {
    name: "ai-hook",
    summary: "Lifecycle hook for agents: reads the hook JSON on stdin, posts one ai.* frame",
    load: () => dyn("ai_hook"),
  },
  {
    name: "mcp",
    summary: "Serve the read-only MCP bridge on stdio, or install it into coding agents",
    heavy: true,
    load: () => dyn("mcp"),
  },
  {
    name: "adapter",
    summary: "Drive an agent through an adapter plugin (start, turn, state, ...)",
    load: () => dyn("adapter"),
  },
  {
    name: "plugin",
    summary: "List, describe or validate adapter plugins",
    heavy: true,
    load: () => dyn("plugin"),
  },
  {
    name: "web",
    summary: "Serve a live view of every pane in a browser (read-only unless --input)",
    heavy: true,
    load: () => dyn("web"),
  },
  {
    name: "notify",
    summary: "List notification rules and sinks, or send a test notification",
    load: () => dyn("notify"),
  },
  {
    name: "api",
    summary: "Call a JSON-RPC method, or print the protocol's JSON Schema",
    heavy: true,
    load: () => dyn("api"),
  },
  {
    name: "tmux",
    summary: "Speak tmux: run tmux commands (split-window, list-panes, ...) on this host's panes",
    load: () => dyn("tmux"),
  },
  {
    name: "hosts",
    summary: "List the config's remote hosts with reachability and versions",
    load: () => dyn("hosts"),
  },
  {
    name: "relay",
    summary: "Join stdin/stdout to the host's socket (what --host runs over ssh)",
    load: () => dyn("relay"),
  },
  {
    name: "version",
    summary: "Print the version, and the running host's (system.identify) when one answers",
    load: () => dyn("version"),
  },
  { name: "help", summary: "Show help for paneflow or a verb", load: () => dyn("help") },
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
