import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { UsageError } from "../errors.ts";
import { defineVerb, printJson, printLine } from "./_verb.ts";
import { explainGate } from "./send.ts";

export default defineVerb({
  name: "ask",
  usage: "paneflow ask <target> <text> --marker <m> [--timeout <s>] [--no-submit] [--raw] [--json]",
  details: [
    "Types the text and presses Enter (through the submit transaction in an agent's pane),",
    "then waits for a row holding the marker that appears after the echo of the text, and",
    "prints the rows in between without the echo and bare shell-prompt lines. A marker inside",
    "the typed command does not count. Exit 4 on timeout (the error names the last line seen).",
    "The reply (and a timeout's last line seen) is fenced as untrusted terminal output unless",
    "--raw or ai_injection_fence is off. Gated like send. See docs/paneio.md.",
  ].join("\n"),
  options: {
    marker: { type: "string", value: "<m>", description: "The text that ends the reply (required)" },
    timeout: { type: "number", value: "<s>", description: "Seconds to wait for the marker (default 30)" },
    "no-submit": { type: "boolean", description: "Type the text without pressing Enter" },
    raw: { type: "boolean", description: "Return the reply without the untrusted-output fence" },
    json: { type: "boolean", description: "Print {reply, elapsed_ms, fenced} as JSON" },
  },
  positionals: [{ name: "target" }, { name: "text" }],
  run({ opts, args }) {
    if (!opts.marker) throw new UsageError("paneflow ask needs --marker <m>; see paneflow ask --help");
    if (opts.timeout !== undefined && !(opts.timeout > 0)) {
      throw new UsageError("--timeout must be a positive number of seconds");
    }
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const params: Record<string, unknown> = { surface_id, text: args[1], marker: opts.marker };
      const waitMs = Math.max(1, Math.round((opts.timeout ?? 30) * 1000));
      params.timeout_ms = waitMs;
      if (opts["no-submit"]) params.submit = false;
      if (opts.raw) params.fenced = false;
      // The host answers once the reply is complete or the wait is over: the reply deadline covers the wait.
      const timeoutMs = client.timeoutMs && client.timeoutMs + waitMs;
      const r = await client.call("surface.ask", params, { timeoutMs }).catch(explainGate);
      if (opts.json) printJson(r);
      else if (r.reply) printLine(r.reply);
      return 0;
    });
  },
});
