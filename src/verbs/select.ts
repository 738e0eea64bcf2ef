import { withClient } from "../client/client.ts";
import { workspaceRef } from "../client/workspace_ref.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "select",
  summary: "Make a workspace active (zero-based index or stable id w<N>, as workspace.list gives them)",
  usage: "paneflow select <index|id>",
  options: {},
  positionals: [{ name: "index" }],
  run({ args }) {
    const index = workspaceRef(args[0], "paneflow select");
    return withClient(async (client) => {
      printJson(await client.call("workspace.select", { index }));
      return 0;
    });
  },
});
