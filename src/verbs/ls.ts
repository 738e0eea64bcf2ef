import { withClient } from "../client/client.ts";
import { workspaceRef } from "../client/workspace_ref.ts";
import { listPanes, type PaneInfo } from "../client/selectors.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";

export default defineVerb({
  name: "ls",
  aliases: ["list_panes"],
  usage: "paneflow ls [--all | --all-hosts] [--workspace <index|id>] [--human|--json]",
  options: {
    all: { type: "boolean", short: "a", description: "List panes of every workspace" },
    "all-hosts": {
      type: "boolean",
      description: "Every pane of this machine and of every host in the config's hosts, with a HOST column",
    },
    workspace: {
      type: "string",
      short: "w",
      value: "<index|id>",
      description: "List panes of this workspace",
    },
    human: { type: "boolean", description: "Print an aligned table" },
    json: {
      type: "boolean",
      description: "Print JSON (the default; for scripts that pass --json everywhere)",
    },
  },
  positionals: [],
  async run({ opts }) {
    if (opts.human && opts.json) throw new UsageError("--human and --json are exclusive");
    if (opts["all-hosts"]) return await allHosts(opts.human);
    return withClient(async (client) => {
      let surfaces = await listPanes(client);
      if (!opts.all) {
        const { workspaces } = await client.call("workspace.list");
        const ref = opts.workspace === undefined ? undefined : workspaceRef(opts.workspace);
        const chosen = ref === undefined
          ? undefined
          : workspaces.find((w) => (typeof ref === "number" ? w.index === ref : w.id === ref));
        if (ref !== undefined && !chosen) {
          throw new CliFailure(
            workspaces.length
              ? `No workspace ${opts.workspace}; indexes are 0..${workspaces.length - 1}`
              : `No workspace ${opts.workspace}; there are no workspaces`,
            ExitCode.NotFound,
          );
        }
        const index = chosen?.index ?? workspaces.find((w) => w.active)?.index;
        surfaces = surfaces.filter((s) => s.workspace === index);
      }
      if (!opts.human) {
        printJson({ surfaces });
        return 0;
      }
      printTable(
        ["ID", "NAME", "WS", "SIZE", "STATE", "CWD", "CMD"],
        surfaces.map(paneRow),
      );
      return 0;
    });
  },
});

/** `ls --all-hosts`: every pane of every host, fetched in parallel; unreachable hosts reported. */
async function allHosts(human: boolean): Promise<number> {
  const { eachHost, reportUnreachable } = await import("../remote/fleet.ts");
  const answers = await eachHost((c) => listPanes(c));
  if (!human) {
    printJson({
      hosts: answers.map((a) => a.ok ? { host: a.host, ok: true, surfaces: a.value } : a),
    });
  } else {
    printTable(
      ["HOST", "ID", "NAME", "WS", "SIZE", "STATE", "CWD", "CMD"],
      answers.flatMap((a) => a.ok ? a.value.map((s) => [a.host, ...paneRow(s)]) : []),
    );
  }
  return reportUnreachable(answers);
}

function paneRow(s: PaneInfo): (string | number | null)[] {
  return [
    s.surface_id,
    s.name,
    s.workspace,
    `${s.cols}x${s.rows}`,
    s.exited ? `exited ${s.exit_code}` : s.focused ? "focused" : "running",
    s.cwd,
    s.cmd,
  ];
}
