import { withClient } from "../client/client.ts";
import { UsageError } from "../errors.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "api",
  usage: "paneflow api <method> [<params-json>] | paneflow api schema",
  options: {},
  positionals: [{ name: "method" }, { name: "params", optional: true }],
  async run({ args }) {
    if (args[0] === "schema") {
      const { jsonSchema } = await import("../spec/protocol.ts");
      printJson(jsonSchema());
      return 0;
    }
    if (args[0] === "events.subscribe") {
      throw new UsageError(
        "events.subscribe turns the connection into a stream of events; use paneflow watch",
      );
    }
    let params: unknown = {};
    if (args[1] !== undefined) {
      try {
        params = JSON.parse(args[1]);
      } catch (e) {
        throw new UsageError(`Params are not valid JSON: ${(e as Error).message}`, { cause: e });
      }
    }
    return withClient(async (client) => {
      printJson(await client.callAny(args[0], params));
      return 0;
    });
  },
});
