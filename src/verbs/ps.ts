import { withClient } from "../client/client.ts";
import type { Result } from "../spec/results.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";
import { dollars } from "./usage.ts";

type Agent = Result<"fleet.list">["agents"][number];

export default defineVerb({
  name: "ps",
  usage: "paneflow ps [--all-hosts] [--json]",
  options: {
    json: { type: "boolean", description: 'Print {"agents":[...]} (with --all-hosts: {"hosts":[...]})' },
    "all-hosts": {
      type: "boolean",
      description: "Agents of this machine and of every host in the config's hosts, with a HOST column",
    },
  },
  positionals: [],
  async run({ opts }) {
    if (opts["all-hosts"]) return await allHosts(opts.json);
    return withClient(async (client) => {
      const fleet = await client.call("fleet.list");
      if (opts.json) {
        printJson(fleet);
        return 0;
      }
      if (!fleet.agents.length) {
        console.log("No agents detected.");
        return 0;
      }
      printTable(
        ["ID", "NAME", "WS", "TOOL", "STATE", "COST", "TOOL_IN_USE", "MESSAGE"],
        fleet.agents.map(agentRow),
      );
      return 0;
    });
  },
});

/** `ps --all-hosts`: every host's fleet at once; unreachable hosts reported, not fatal. */
async function allHosts(json: boolean): Promise<number> {
  const { eachHost, reportUnreachable } = await import("../remote/fleet.ts");
  const answers = await eachHost((c) => c.call("fleet.list").then((f) => f.agents));
  if (json) {
    printJson({ hosts: answers.map((a) => a.ok ? { host: a.host, ok: true, agents: a.value } : a) });
  } else {
    printTable(
      ["HOST", "ID", "NAME", "WS", "TOOL", "STATE", "COST", "TOOL_IN_USE", "MESSAGE"],
      answers.flatMap((a) => a.ok ? a.value.map((x) => [a.host, ...agentRow(x)]) : []),
    );
  }
  return reportUnreachable(answers);
}

function agentRow(a: Agent): (string | number | null)[] {
  return [
    a.surface_id,
    a.surface_name,
    a.workspace,
    a.tool,
    a.state,
    // A remote host of an older version sends no cost.
    typeof a.cost_usd === "number" ? dollars(a.cost_usd) : null,
    a.active_tool_name,
    a.message,
  ];
}
