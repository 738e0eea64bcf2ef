import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "focus",
  usage: "paneflow focus <target>",
  options: {},
  positionals: [{ name: "target" }],
  run({ args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      printJson(await client.call("surface.focus", { surface_id }));
      return 0;
    });
  },
});
