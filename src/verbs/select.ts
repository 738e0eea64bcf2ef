import { withClient } from "../client/client.ts";
import { workspaceRef } from "../client/workspace_ref.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "select",
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
