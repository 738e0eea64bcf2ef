import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "clear",
  usage: "paneflow clear <target> [--json]",
  details: "Done in paneflow's terminal, not typed: the program is not told. See docs/paneio.md.",
  options: { json: { type: "boolean", description: "Print the result object" } },
  positionals: [{ name: "target" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const r = await client.call("surface.clear", { surface_id });
      if (opts.json) printJson(r);
      return 0;
    });
  },
});
