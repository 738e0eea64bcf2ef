import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "search",
  aliases: ["search_pane"],
  summary: "Search a pane's scrollback (case-insensitive substring)",
  usage: "paneflow search <target> <pattern> [--max <n>] [--human]",
  options: {
    max: {
      type: "number",
      value: "<n>",
      description: "At most this many matches (default 50, clamped to 1..1000)",
    },
    human: { type: "boolean", description: "Print `line N: text` lines instead of JSON" },
  },
  positionals: [{ name: "target" }, { name: "pattern" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const params: Record<string, unknown> = { surface_id, pattern: args[1] };
      if (opts.max !== undefined) params.max_matches = opts.max;
      const result = await client.call<{ matches: { line: number; text: string }[] }>(
        "surface.search",
        params,
      );
      if (!opts.human) printJson(result);
      else for (const m of result.matches) console.log(`line ${m.line}: ${m.text}`);
      return 0;
    });
  },
});
