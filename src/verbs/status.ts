import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { dollars } from "./usage.ts";

export default defineVerb({
  name: "status",
  usage: "paneflow status <target> [--json]",
  options: { json: { type: "boolean", description: "Print the status object as JSON" } },
  positionals: [{ name: "target" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const s = await client.call("surface.status", { surface_id });
      if (opts.json) {
        printJson(s);
        return 0;
      }
      const name = s.surface_name ? ` (${s.surface_name})` : "";
      const tool = s.tool ? ` ${s.tool}` : "";
      const detail = s.message ? `: ${s.message}` : s.reason ? ` [${s.reason}]` : "";
      // A host without the ledger (an older version) shows no cost.
      const spent = (await client.call("usage.get", { surface_id }).catch(() => null))?.total;
      const cost = spent?.messages ? ` (${dollars(spent.cost_usd)}, ${spent.total_tokens} tokens)` : "";
      console.log(`${s.surface_id}${name}${tool} ${s.state}${cost}${detail}`);
      return 0;
    });
  },
});
