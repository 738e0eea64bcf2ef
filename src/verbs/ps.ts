import { withClient } from "../client/client.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";

type Agent = Record<string, string | number | boolean | null>;

export default defineVerb({
  name: "ps",
  summary: "List detected agents across all workspaces (table; --json for JSON)",
  usage: "paneflow ps [--json]",
  options: { json: { type: "boolean", description: 'Print {"agents":[...]}' } },
  positionals: [],
  run({ opts }) {
    return withClient(async (client) => {
      const fleet = await client.call<{ agents: Agent[] }>("fleet.list");
      if (opts.json) {
        printJson(fleet);
        return 0;
      }
      if (!fleet.agents.length) {
        console.log("No agents detected.");
        return 0;
      }
      printTable(
        ["ID", "NAME", "WS", "TOOL", "STATE", "TOOL_IN_USE", "MESSAGE"],
        fleet.agents.map((a) => [
          a.surface_id as number,
          a.surface_name as string | null,
          a.workspace as number,
          a.tool as string | null,
          a.state as string,
          a.active_tool_name as string | null,
          a.message as string | null,
        ]),
      );
      return 0;
    });
  },
});
