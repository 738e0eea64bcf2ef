import { defineVerb, printJson, printTable } from "./_verb.ts";

export default defineVerb({
  name: "agents",
  usage: "paneflow agents [--queue <dir>] [--json]",
  details: "The host keeps these from the panes' real states. See docs/paneio.md.",
  options: {
    queue: {
      type: "string",
      value: "<dir>",
      description: "The queue root (default: $PANEFLOW_QUEUE, else the host's)",
    },
    json: { type: "boolean", description: "Print JSON" },
  },
  positionals: [],
  async run({ opts }) {
    const { queueRoot } = await import("../paneio/cli.ts");
    const { readStatuses } = await import("../paneio/store.ts");
    const root = await queueRoot(opts.queue);
    const { agents, problems } = await readStatuses(root);
    for (const p of problems) console.error(`paneflow: ${p.file}:${p.line}: ${p.message}`);
    if (opts.json) {
      printJson(agents);
      return 0;
    }
    printTable(
      ["AGENT", "STATE", "TASK", "DONE", "FAILED", "UPDATED"],
      agents.map((a) => [
        a.agent_name,
        a.state,
        a.current_task,
        a.statistics.tasks_completed ?? 0,
        a.statistics.tasks_failed ?? 0,
        a.last_updated,
      ]),
    );
    return 0;
  },
});
