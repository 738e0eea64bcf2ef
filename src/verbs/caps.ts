import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { CliFailure } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { CAPABILITIES, CAPABILITY_HELP } from "../spec/caps_names.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";
import { formatScope } from "./_caps.ts";

export default defineVerb({
  name: "caps",
  usage: "paneflow caps <pane> [--json]",
  details: [
    "A pane's capabilities: what its programs may do through the socket, over which panes.",
    "Scopes: none, self, workspace, all, or selectors (names, globs such as worker-*, ids).",
    ...CAPABILITIES.map((c) => `  ${c.padEnd(7)} ${CAPABILITY_HELP[c]}`),
    "Granted by up/flow `caps = {...}`, new/split --caps, and the config's caps.pane. See docs/security.md.",
  ].join("\n"),
  options: { json: { type: "boolean", description: "Print {surface_id, name, caps}" } },
  positionals: [{ name: "pane" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const id = await resolveOne(client, args[0]);
      let pane;
      const { workspaces } = await client.call("workspace.list");
      for (const ws of workspaces) {
        const r = await client.call("surface.list", { workspace: ws.index });
        pane = r.surfaces.find((s) => s.surface_id === id);
        if (pane) break;
      }
      if (!pane) throw new CliFailure(`No pane with surface_id ${id}`, ExitCode.NotFound);
      const caps = pane.caps ?? {};
      if (opts.json) {
        printJson({ surface_id: pane.surface_id, name: pane.name, caps });
        return 0;
      }
      printTable(
        ["CAPABILITY", "SCOPE"],
        CAPABILITIES.map((c) => [c, caps[c] === undefined ? "none" : formatScope(caps[c])]),
      );
      return 0;
    });
  },
});
