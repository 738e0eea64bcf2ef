/**
 * `paneflow notify ls` / `paneflow notify test <sink>`: the host's
 * notification rules and sinks, and a sample sent to one sink
 * (docs/notify.md).
 *
 * @module
 */
import { withClient } from "../client/client.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { defineVerb, printJson, printTable } from "./_verb.ts";

/** What `paneflow notify` was asked. */
export type NotifyArgs = { action: "ls" } | { action: "test"; sink: string };

/** Reads the subcommand and its argument (pure; throws {@link UsageError}). */
export function parseNotifyArgs(args: string[]): NotifyArgs {
  const [action, sink, extra] = args;
  if (action === "ls") {
    if (sink !== undefined) throw new UsageError(`Unexpected argument "${sink}" for paneflow notify ls`);
    return { action };
  }
  if (action === "test") {
    if (sink === undefined) {
      throw new UsageError("Missing the sink: paneflow notify test <sink> (see notify ls)");
    }
    if (extra !== undefined) throw new UsageError(`Unexpected argument "${extra}" for paneflow notify test`);
    return { action, sink };
  }
  throw new UsageError(
    action === undefined
      ? "Missing the subcommand: paneflow notify ls, or paneflow notify test <sink>"
      : `Unknown subcommand "${action}" for paneflow notify; it takes ls or test <sink>`,
  );
}

const when = (ms: number | null) => ms === null ? null : new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

export default defineVerb({
  name: "notify",
  usage: "paneflow notify ls [--json] | paneflow notify test <sink> [--json]",
  details: [
    "ls: the config's notify rules and, per sink, what was sent, failed or dropped, what waits,",
    "the last delivery and the last error; where reply links point.",
    'test <sink>: sends a sample notification (event "test") to one sink and waits for the',
    "outcome (retries included); exit 1 when it failed. See docs/notify.md.",
  ].join("\n"),
  options: { json: { type: "boolean", description: "Print the method's result" } },
  positionals: [{ name: "ls|test" }, { name: "sink", optional: true }],
  run({ opts, args }) {
    const parsed = parseNotifyArgs(args);
    return withClient(async (client) => {
      if (parsed.action === "test") {
        const r = await client.call("notify.test", { sink: parsed.sink });
        if (opts.json) printJson(r);
        if (!r.ok) throw new CliFailure(`Sink "${r.sink}" failed after ${r.attempts} attempt(s): ${r.error}`);
        if (!opts.json) console.log(`Sent a test notification to "${r.sink}"`);
        return 0;
      }
      const r = await client.call("notify.ls");
      if (opts.json) {
        printJson(r);
        return 0;
      }
      if (!r.rules.length && !r.sinks.length) {
        console.log("No notify rules or sinks in the config; see docs/notify.md");
        return 0;
      }
      printTable(
        ["RULE", "WHEN", "WHERE", "TO"],
        r.rules.map((rule, i) => [
          i,
          rule.when.join(","),
          Object.entries(rule.where).map(([k, v]) => `${k}=${v}`).join(" ") || "*",
          rule.to.join(","),
        ]),
      );
      console.log("");
      printTable(
        ["SINK", "TYPE", "SENT", "FAILED", "DROPPED", "QUEUED", "LAST SENT", "LAST ERROR"],
        r.sinks.map((s) => [
          s.name,
          s.type,
          s.sent,
          s.failed,
          s.dropped,
          s.queued,
          when(s.last_sent),
          s.last_error === null ? null : `${when(s.last_error_at)} ${s.last_error}${s.down ? " (down)" : ""}`,
        ]),
      );
      console.log(`\nReply links: ${r.public_url ?? "off (run paneflow web, or set notify.public_url)"}`);
      return 0;
    });
  },
});
