import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { UsageError } from "../errors.ts";
import { PANE_OPTIONS } from "./_pane_options.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { absoluteDir, withTmuxEnv } from "./_env.ts";

export default defineVerb({
  name: "split",
  usage:
    "paneflow split <h|v> [--target <sel>] [--command <cmd>] [--name <name>] [--cwd <dir>] [--worktree <branch>] [--caps <cap>=<scope>]",
  details:
    "Without --target the focused pane of the active workspace is split. Siblings are resized (SIGWINCH).",
  options: {
    target: { type: "string", short: "t", value: "<sel>", description: "Pane to split" },
    command: {
      type: "string",
      short: "c",
      value: "<cmd>",
      description: "Run this shell command instead of a shell",
    },
    name: { type: "string", value: "<name>", description: "Name of the new pane" },
    cwd: { type: "string", value: "<dir>", description: "Working directory (default: the current one)" },
    ...PANE_OPTIONS,
    worktree: {
      type: "string",
      value: "<branch>",
      description: "Run in the managed worktree <repo>.worktrees/<branch> of --cwd's repository",
    },
  },
  positionals: [{ name: "h|v" }],
  async run({ opts, args }) {
    const direction = args[0];
    if (direction !== "h" && direction !== "v") {
      throw new UsageError(`Split direction must be "h" or "v", got "${direction}"`);
    }
    const { parseEnvPairs } = await import("./_env.ts");
    return withClient(async (client) => {
      const params: Record<string, unknown> = { direction, cwd: absoluteDir(opts.cwd) };
      if (opts.target !== undefined) params.surface_id = await resolveOne(client, opts.target);
      if (opts.command !== undefined) params.command = opts.command;
      if (opts.name !== undefined) params.name = opts.name;
      if (opts.worktree !== undefined) params.managed_worktree = opts.worktree;
      if (opts.env.length) params.env = parseEnvPairs(opts.env);
      if (opts.caps.length) params.caps = (await import("./_caps.ts")).parseCapsFlags(opts.caps);
      if (opts["tmux-compat"]) {
        params.env = await withTmuxEnv(params.env as Record<string, string> | undefined);
      }
      if (opts.restart) params.restart = true;
      printJson(await client.call("surface.split", params));
      return 0;
    });
  },
});
