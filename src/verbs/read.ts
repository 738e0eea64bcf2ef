import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson, printLine } from "./_verb.ts";

export default defineVerb({
  name: "read",
  aliases: ["read_pane"],
  usage: "paneflow read <target> [--lines <n>] [--offset <n>] [--raw] [--json]",
  options: {
    lines: {
      type: "number",
      short: "n",
      value: "<n>",
      description: "How many lines (default 200, clamped to 1..4000)",
    },
    offset: { type: "number", value: "<n>", description: "Skip this many lines back from the end" },
    since: {
      type: "number",
      value: "<gen>",
      description: "Only lines added or changed since this output_generation (from an earlier --json read)",
    },
    raw: { type: "boolean", description: "Return the text without the untrusted-output fence" },
    join: { type: "boolean", description: "Logical lines: join rows that soft-wrapped" },
    fenced: { type: "boolean", description: "Fence the text even when ai_injection_fence is off" },
    json: { type: "boolean", description: "Print the whole result object" },
  },
  positionals: [{ name: "target" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const params: Record<string, unknown> = { surface_id };
      if (opts.lines !== undefined) params.lines = opts.lines;
      if (opts.offset !== undefined) params.offset = opts.offset;
      if (opts.since !== undefined) params.since = opts.since;
      if (opts.join) params.join_wrapped = true;
      if (opts.raw) params.fenced = false;
      else if (opts.fenced) params.fenced = true;
      const result = await client.call("surface.read", params);
      if (opts.json) printJson(result);
      else if (result.text) printLine(result.text);
      return 0;
    });
  },
});
