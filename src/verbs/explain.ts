import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { defineVerb, printJson } from "./_verb.ts";

const age = (ms: number) => (ms < 1000 ? `${ms} ms ago` : `${(ms / 1000).toFixed(1)} s ago`);

export default defineVerb({
  name: "explain",
  usage: "paneflow explain <target> [--json]",
  options: { json: { type: "boolean", description: "Print the explanation as JSON" } },
  positionals: [{ name: "target" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const e = await client.call("surface.explain", { surface_id });
      if (opts.json) {
        printJson(e);
        return 0;
      }
      const s = e.status;
      console.log(
        `pane ${s.surface_id}${s.surface_name ? ` (${s.surface_name})` : ""}: ${s.state}` +
          (s.tool ? ` (${s.tool}, ${s.hooked ? "hooked" : "no hooks"})` : ""),
      );
      console.log(`  why:     ${e.why}`);
      console.log(`  reason:  ${s.reason}`);
      if (s.message) console.log(`  message: ${s.message}`);
      console.log(
        `  process: ${
          e.process
            ? `${e.process.pid} ${e.process.argv.join(" ")}${
              e.process.family ? ` [${e.process.family}]` : ""
            }`
            : "-"
        }`,
      );
      console.log(
        `  hook:    ${
          e.last_hook
            ? `${e.last_hook.event ?? e.last_hook.method} ${age(e.last_hook.age_ms)} → ${e.hook_state}`
            : "none received"
        }`,
      );
      console.log(
        `  screen:  ${
          e.screen
            ? `rule "${e.screen.rule}" → ${e.screen.state} ${
              age(e.screen.age_ms)
            } (rules for ${e.screen.rules_version})`
            : "no rule matched"
        }`,
      );
      if (e.refused_hook_frames) {
        console.log(`  refused: ${e.refused_hook_frames} hook frame(s) without this pane's token (forged?)`);
      }
      const calls = e.refused_calls;
      if (calls?.count && calls.last) {
        console.log(
          `  refused: ${calls.count} call(s) aimed at this pane for want of a capability; the last: ` +
            `${calls.last.method} (${calls.last.capability}) by ${calls.last.caller} ${
              age(Date.now() - calls.last.ts)
            }`,
        );
      }
      return 0;
    });
  },
});
