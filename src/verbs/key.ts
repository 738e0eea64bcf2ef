import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { explainGate } from "./send.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "key",
  usage: "paneflow key <target> <keystroke>",
  details: [
    "Keys: tab, shift-tab, esc (escape), backspace, delete, insert, up, down, left, right,",
    "home, end, pageup, pagedown, space, f1..f12, ctrl-<letter>, alt-<key>, or one printable",
    "character typed as itself (`key agent 1` picks a dialog's first option). Enter, ctrl-m,",
    "ctrl-j and anything else that submits are refused. Needs PANEFLOW_IPC_SCRIPTING=1.",
  ].join("\n"),
  options: { json: { type: "boolean", description: "Print the result object" } },
  positionals: [{ name: "target" }, { name: "keystroke" }],
  run({ opts, args }) {
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const result = await client.call("surface.send_keystroke", { surface_id, keystroke: args[1] })
        .catch(explainGate);
      if (opts.json) printJson(result);
      return 0;
    });
  },
});
