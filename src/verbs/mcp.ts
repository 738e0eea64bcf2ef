import { UsageError } from "../errors.ts";
import type { AgentId, AgentReport, BridgeCommand } from "../mcp/install.ts";
import { selfCommand } from "../paths.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";

const AGENTS: Record<string, AgentId> = {
  claude: "claude",
  "claude-code": "claude",
  codex: "codex",
  gemini: "gemini",
  "gemini-cli": "gemini",
  opencode: "opencode",
};

/** Parsed `paneflow mcp` arguments; pure. */
export interface McpArgs {
  action: "serve" | "install" | "status" | "uninstall";
  agents: AgentId[];
}

/** Checks the action and `--agent` names. */
export function parseMcpArgs(args: string[], agentNames: string[]): McpArgs {
  const action = args[0] ?? "serve";
  if (action !== "serve" && action !== "install" && action !== "status" && action !== "uninstall") {
    throw new UsageError(
      `Unknown action "${action}" for paneflow mcp; expected install, status or uninstall (or nothing to serve)`,
    );
  }
  const agents: AgentId[] = [];
  for (const name of agentNames) {
    const id = AGENTS[name.toLowerCase()];
    if (!id) {
      throw new UsageError(`Unknown agent "${name}"; expected one of claude, codex, gemini, opencode`);
    }
    if (!agents.includes(id)) agents.push(id);
  }
  return { action, agents };
}

/** The command agents should run to start the bridge. */
export function bridgeCommand(socket?: string): BridgeCommand {
  const [command, ...args] = selfCommand(["mcp"]);
  return { command, args, ...(socket ? { env: { PANEFLOW_SOCKET_PATH: socket } } : {}) };
}

function describe(r: AgentReport, dryRun: boolean): string {
  const would = dryRun ? "would be " : "";
  switch (r.action) {
    case "skipped":
      return "skipped: not set up here";
    case "error":
      return `error: ${r.error}`;
    case "unchanged":
      return r.installed ? "already installed" : "not installed";
    case "added":
      return `${would}added`;
    case "updated":
      return `${would}updated to this program's command`;
    case "removed":
      return `${would}removed`;
  }
}

function statusText(r: AgentReport): string {
  if (r.action === "error") return `error: ${r.error}`;
  if (r.installed) {
    return r.current ? "installed" : "installed (runs a different command; `mcp install` updates it)";
  }
  return r.present ? "not installed" : "not installed (agent not set up here)";
}

export default defineVerb({
  name: "mcp",
  usage: "paneflow mcp [install|status|uninstall] [--agent <name>]... [--dry-run] [--json]",
  details: [
    "With no action, runs the MCP server on stdin/stdout (stdout carries the protocol only). Tools:",
    "list_panes, read_pane(target, lines?, offset?), search_pane(target, pattern, max_matches?); each pane",
    "is also a resource pane://<name-or-id>/content. Terminal output always comes back fenced.",
    "",
    "install registers the bridge as `paneflow` in the configs of the agents set up here: Claude Code",
    "($CLAUDE_CONFIG_DIR/.claude.json or ~/.claude.json), Codex ($CODEX_HOME/config.toml or",
    "~/.codex/config.toml), Gemini CLI (~/.gemini/settings.json) and opencode",
    "($XDG_CONFIG_HOME/opencode/opencode.json). Changed files are backed up to <file>.bak first and",
    "replaced atomically; a file that does not parse is left alone. uninstall removes only our entry.",
  ].join("\n"),
  options: {
    agent: {
      type: "string",
      multiple: true,
      value: "<name>",
      description: "Only this agent: claude, codex, gemini or opencode",
    },
    "dry-run": { type: "boolean", description: "Show what install or uninstall would change; write nothing" },
    socket: {
      type: "string",
      value: "<path>",
      description:
        "With install: pin this host socket in the entry (default: the agent's PANEFLOW_SOCKET_PATH)",
    },
    json: { type: "boolean", description: "Print the per-agent report as JSON" },
  },
  positionals: [{ name: "action", optional: true }],
  async run({ opts, args }) {
    const { action, agents } = parseMcpArgs(args, opts.agent);
    if (action === "serve") {
      const { serveStdio } = await import("../mcp/server.ts");
      return await serveStdio();
    }
    const { applyAll, statusAll } = await import("../mcp/install.ts");
    const command = bridgeCommand(opts.socket);
    const run = { env: Deno.env, command, agents, dryRun: opts["dry-run"] };
    const reports = action === "status" ? await statusAll(run) : await applyAll(action, run);
    const failed = reports.some((r) => r.action === "error");
    if (opts.json) {
      printJson({
        action,
        dry_run: opts["dry-run"],
        command: [command.command, ...command.args],
        agents: reports,
      });
      return failed ? 1 : 0;
    }
    if (action === "status") {
      printTable(["AGENT", "STATUS", "CONFIG"], reports.map((r) => [r.label, statusText(r), r.file]));
    } else {
      printTable(
        ["AGENT", "RESULT", "CONFIG"],
        reports.map((r) => [
          r.label,
          describe(r, opts["dry-run"]) + (r.rewritten ? " (file re-serialized: comments not kept)" : ""),
          r.file + (r.backup ? ` (backup: ${r.backup})` : ""),
        ]),
      );
    }
    for (const r of reports) if (r.action === "error") console.error(`paneflow: ${r.error}`);
    const present = reports.filter((r) => r.present);
    if (action === "install" && present.length === 0) {
      console.error(
        "paneflow: No agent config found; looked for " + reports.map((r) => r.file).join(", ") +
          ". Install and start an agent once, or create its config directory, then run this again",
      );
      return 1;
    }
    if (action !== "status" && !opts["dry-run"]) {
      const changed = reports.some((r) =>
        r.action === "added" || r.action === "updated" || r.action === "removed"
      );
      if (changed) console.log("Restart the agents (or start new sessions) to pick up the change.");
    }
    if (action === "install") console.log(`Bridge command: ${[command.command, ...command.args].join(" ")}`);
    return failed ? 1 : 0;
  },
});
