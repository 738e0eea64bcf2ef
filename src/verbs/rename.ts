import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "rename",
  usage: "paneflow rename <target> <name> | paneflow rename <target> --clear",
  options: { clear: { type: "boolean", description: "Remove the pane's name" } },
  positionals: [{ name: "target" }, { name: "name", optional: true }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const name = opts.clear ? null : args[1];
      if (name === undefined) {
        const { UsageError } = await import("../errors.ts");
        throw new UsageError("Missing <name> (or --clear) for paneflow rename");
      }
      printJson(await client.call("surface.rename", { surface_id, name }));
      return 0;
    });
  },
});
