import { CliFailure } from "../errors.ts";
import { ExitCode } from "../spec/codes.ts";
import { findVerb, usage } from "./mod.ts";
import { defineVerb, renderHelp } from "./_verb.ts";

export default defineVerb({
  name: "help",
  usage: "paneflow help [<verb>]",
  options: {},
  positionals: [{ name: "verb", optional: true }],
  async run({ args }) {
    if (!args[0]) {
      console.log(usage());
      return 0;
    }
    const entry = findVerb(args[0]);
    if (!entry) throw new CliFailure(`Unknown verb "${args[0]}"\n\n${usage()}`, ExitCode.Usage);
    const verb = (await entry.load()).default;
    console.log(renderHelp({ ...verb, summary: entry.summary }, verb.options));
    return 0;
  },
});
