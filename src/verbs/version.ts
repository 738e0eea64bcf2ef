import { Client } from "../client/client.ts";
import { PROTOCOL_VERSION, VERSION } from "../spec/codes.ts";
import { defineVerb, printLine } from "./_verb.ts";

export default defineVerb({
  name: "version",
  usage: "paneflow version",
  details: "The second line, `host: ...`, is left out when no host answers on the socket.",
  options: {},
  positionals: [],
  async run() {
    printLine(`paneflow ${VERSION} (protocol ${PROTOCOL_VERSION})`);
    const client = await Client.tryConnect();
    if (!client) return 0;
    try {
      const host = await client.call("system.identify");
      printLine(
        `host: paneflow ${host.version} (protocol ${host.protocol}), pid ${host.pid}, ${host.socket}`,
      );
    } catch {
      // A host that cannot say who it is: the client's version is still the answer.
    } finally {
      client.close();
    }
    return 0;
  },
});
