import { withClient } from "../client/client.ts";
import { workspaceRef } from "../client/workspace_ref.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "close",
  usage: "paneflow close <target> | paneflow close --workspace <index|id>",
  options: {
    workspace: {
      type: "string",
      short: "w",
      value: "<index|id>",
      description: "Close this workspace and all its panes",
    },
  },
  positionals: [{ name: "target", optional: true }],
  run({ opts, args }) {
    return withClient(async (client) => {
      if (opts.workspace !== undefined) {
        printJson(await client.call("workspace.close", { index: workspaceRef(opts.workspace) }));
        return 0;
      }
      if (args[0] === undefined) {
        const { UsageError } = await import("../errors.ts");
        throw new UsageError("Missing <target> (or --workspace <index|id>) for paneflow close");
      }
      const surface_id = await resolveOne(client, args[0]);
      printJson(await client.call("surface.close", { surface_id }));
      return 0;
    });
  },
});
