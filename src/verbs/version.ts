import { PROTOCOL_VERSION, VERSION } from "../spec/codes.ts";
import { defineVerb } from "./_verb.ts";

export default defineVerb({
  name: "version",
  summary: "Print the version",
  usage: "paneflow version",
  options: {},
  positionals: [],
  run() {
    console.log(`paneflow ${VERSION} (protocol ${PROTOCOL_VERSION})`);
    return Promise.resolve(0);
  },
});
