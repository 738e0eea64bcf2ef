import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { UsageError } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { defineVerb, printJson, printLine } from "./_verb.ts";

export default defineVerb({
  name: "ready",
  usage: "paneflow ready <target> [--wait] [--timeout <s>] [--json]",
  details: [
    "Ready: a shell at its prompt with no foreground job, or an agent that is idle, finished",
    "or waiting for input (not with a permission dialog open). Not ready: a program running,",
    "a continuation prompt, a dialog, an exited pane. --wait blocks until ready (default",
    "timeout 30 s). Exit codes: 0 ready, 1 not ready, 4 --wait ran out of time. See docs/paneio.md.",
  ].join("\n"),
  options: {
    wait: { type: "boolean", description: "Wait until the pane is ready" },
    timeout: { type: "number", value: "<s>", description: "With --wait: seconds to wait (default 30)" },
    json: { type: "boolean", description: "Print {ready, reason, detail} as JSON" },
  },
  positionals: [{ name: "target" }],
  run({ opts, args }) {
    if (opts.timeout !== undefined && !opts.wait) throw new UsageError("--timeout needs --wait");
    if (opts.timeout !== undefined && !(opts.timeout > 0)) {
      throw new UsageError("--timeout must be a positive number of seconds");
    }
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const params: Record<string, unknown> = { surface_id };
      const waitMs = opts.wait ? Math.max(1, Math.round((opts.timeout ?? 30) * 1000)) : 0;
      if (opts.wait) params.timeout_ms = waitMs;
      // The host answers once the pane is ready or the wait is over: the reply deadline covers the wait.
      const timeoutMs = client.timeoutMs && client.timeoutMs + waitMs;
      const r = await client.call("surface.is_ready", params, { timeoutMs });
      if (opts.json) printJson(r);
      else printLine(`${r.ready ? "ready" : "not ready"}: ${r.reason} (${r.detail})`);
      if (r.ready) return ExitCode.Ok;
      return opts.wait && r.reason !== "exited" ? ExitCode.Timeout : ExitCode.Failure;
    });
  },
});
