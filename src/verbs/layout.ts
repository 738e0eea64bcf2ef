import { withClient } from "../client/client.ts";
import { workspaceRef } from "../client/workspace_ref.ts";
import { UsageError } from "../errors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "layout",
  usage: "paneflow layout <even_h|even_v|main_vertical|tiled|JSON> [--workspace <index|id>]",
  details: 'A tree is {"direction":"h"|"v","children":[...],"sizes":[...]} with {"surface_id":N} leaves.',
  options: {
    workspace: {
      type: "string",
      short: "w",
      value: "<index|id>",
      description: "Workspace (default: the active one)",
    },
  },
  positionals: [{ name: "layout" }],
  run({ opts, args }) {
    let layout: unknown = args[0];
    if (args[0].trim().startsWith("{")) {
      try {
        layout = JSON.parse(args[0]);
      } catch (e) {
        throw new UsageError(`Layout is not valid JSON: ${(e as Error).message}`, { cause: e });
      }
    }
    return withClient(async (client) => {
      const params: Record<string, unknown> = { layout };
      if (opts.workspace !== undefined) params.index = workspaceRef(opts.workspace);
      printJson(await client.call("workspace.restore_layout", params));
      return 0;
    });
  },
});
