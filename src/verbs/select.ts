import { withClient } from "../client/client.ts";
import { UsageError } from "../errors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "select",
  summary: "Make a workspace active (zero-based index, as workspace.list gives it)",
  usage: "paneflow select <index>",
  options: {},
  positionals: [{ name: "index" }],
  run({ args }) {
    const index = Number(args[0]);
    if (!/^\d+$/.test(args[0])) throw new UsageError(`Workspace index must be a number, got "${args[0]}"`);
    return withClient(async (client) => {
      printJson(await client.call("workspace.select", { index }));
      return 0;
    });
  },
});
