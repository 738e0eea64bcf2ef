import { withClient } from "../client/client.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "clients",
  usage: "paneflow clients [--json]",
  details: [
    "One row per connection: its id, the client's pid, name and verb (as the client said in",
    'system.hello; "-" when it did not), its age, and whether it is an event stream. Calls and',
    "event streams are budgeted apart (16 calls, 64 streams). This command's own row is marked *.",
  ].join("\n"),
  options: { json: { type: "boolean", description: "Print the list as JSON" } },
  positionals: [],
  run({ opts }) {
    return withClient(async (client) => {
      const { clients } = await client.call("system.clients");
      if (opts.json) {
        printJson({ clients });
        return 0;
      }
      console.log("ID    PID      AGE     KIND    CLIENT");
      for (const c of clients) {
        const who = [c.name, c.verb].filter(Boolean).join(" ") || "-";
        console.log(
          `${String(c.id).padEnd(5)} ${String(c.pid ?? "-").padEnd(8)} ${
            `${Math.round(c.age_ms / 1000)}s`.padEnd(7)
          } ${(c.stream ? "events" : "calls").padEnd(7)} ${who}${c.self ? " *" : ""}`,
        );
      }
      return 0;
    });
  },
});
