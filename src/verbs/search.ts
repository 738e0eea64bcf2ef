import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "search",
  aliases: ["search_pane"],
  usage: "paneflow search <target> <pattern> [--max <n>] [--raw] [--human]",
  details: [
    "Matches are fenced as untrusted terminal output unless --raw or ai_injection_fence is off:",
    "fenced, the lines are only in `text`, as `line N: text` inside the fence, and `matches`",
    "holds their line numbers; --raw gives `matches` as {line, text}. --human prints the",
    "fenced block (the plain lines with --raw).",
  ].join("\n"),
  options: {
    max: {
      type: "number",
      value: "<n>",
      description: "At most this many matches (default 50, clamped to 1..1000)",
    },
    human: { type: "boolean", description: "Print `line N: text` lines instead of JSON" },
    raw: { type: "boolean", description: "Return the matches without the untrusted-output fence" },
  },
  positionals: [{ name: "target" }, { name: "pattern" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const params: Record<string, unknown> = { surface_id, pattern: args[1] };
      if (opts.max !== undefined) params.max_matches = opts.max;
      if (opts.raw) params.fenced = false;
      const result = await client.call(
        "surface.search",
        params,
      );
      if (!opts.human) printJson(result);
      else if (result.fenced) console.log(result.text);
      else for (const m of result.matches) console.log(`line ${m.line}: ${m.text}`);
      return 0;
    });
  },
});
