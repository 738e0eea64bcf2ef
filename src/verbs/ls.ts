import { withClient } from "../client/client.ts";
import { listPanes } from "../client/selectors.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";

export default defineVerb({
  name: "ls",
  aliases: ["list_panes"],
  summary: "List the panes of the active workspace (JSON; --human for a table)",
  usage: "paneflow ls [--all] [--workspace <index>] [--human|--json]",
  options: {
    all: { type: "boolean", short: "a", description: "List panes of every workspace" },
    workspace: { type: "number", short: "w", value: "<index>", description: "List panes of this workspace" },
    human: { type: "boolean", description: "Print an aligned table" },
    json: {
      type: "boolean",
      description: "Print JSON (the default; for scripts that pass --json everywhere)",
    },
  },
  positionals: [],
  run({ opts }) {
    if (opts.human && opts.json) throw new UsageError("--human and --json are exclusive");
    return withClient(async (client) => {
      let surfaces = await listPanes(client);
      if (!opts.all) {
        const { workspaces } = await client.call<{ workspaces: { index: number; active: boolean }[] }>(
          "workspace.list",
        );
        if (opts.workspace !== undefined && !workspaces.some((w) => w.index === opts.workspace)) {
          throw new CliFailure(
            workspaces.length
              ? `No workspace ${opts.workspace}; indexes are 0..${workspaces.length - 1}`
              : `No workspace ${opts.workspace}; there are no workspaces`,
            ExitCode.NotFound,
          );
        }
        const index = opts.workspace ?? workspaces.find((w) => w.active)?.index;
        surfaces = surfaces.filter((s) => s.workspace === index);
      }
      if (!opts.human) {
        printJson({ surfaces });
        return 0;
      }
      printTable(
        ["ID", "NAME", "WS", "SIZE", "STATE", "CWD", "CMD"],
        surfaces.map((s) => [
          s.surface_id,
          s.name,
          s.workspace,
          `${s.cols}x${s.rows}`,
          s.exited ? `exited ${s.exit_code}` : s.focused ? "focused" : "running",
          s.cwd,
          s.cmd,
        ]),
      );
      return 0;
    });
  },
});
