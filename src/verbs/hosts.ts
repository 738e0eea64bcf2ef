import { defineVerb, printJson, printTable } from "./_verb.ts";

interface Row {
  name: string;
  ssh: string;
  reachable: boolean;
  version?: string;
  protocol?: number;
  panes?: number;
  error?: string;
}

export default defineVerb({
  name: "hosts",
  usage: "paneflow hosts [--json]",
  details: "Each named host (config `hosts.<name> = {ssh, paneflow?, socket?}`) is reached over ssh " +
    "through `paneflow relay`, all at once. Exit 1 when any host is unreachable.",
  options: { json: { type: "boolean", description: 'Print {"hosts":[...]}' } },
  positionals: [],
  async run({ opts }) {
    const { namedHosts } = await import("../client/named_hosts.ts");
    const { Client } = await import("../client/client.ts");
    const { describeError } = await import("../errors.ts");
    const { listPanes } = await import("../client/selectors.ts");
    const targets = await namedHosts();
    const rows: Row[] = await Promise.all(targets.map(async (t): Promise<Row> => {
      const ssh = t.port ? `${t.destination}:${t.port}` : t.destination;
      try {
        const client = await Client.connect(t.label);
        try {
          const id = await client.call("system.identify");
          const panes = (await listPanes(client)).length;
          return { name: t.label, ssh, reachable: true, version: id.version, protocol: id.protocol, panes };
        } finally {
          client.close();
        }
      } catch (e) {
        return { name: t.label, ssh, reachable: false, error: describeError(e).message };
      }
    }));
    if (opts.json) printJson({ hosts: rows });
    else if (!rows.length) console.log('No hosts in the config; add hosts.<name> = {"ssh": "user@box"}');
    else {
      printTable(
        ["NAME", "SSH", "VERSION", "PANES", "STATE"],
        rows.map((
          r,
        ) => [
          r.name,
          r.ssh,
          r.version ?? null,
          r.panes ?? null,
          r.reachable ? "up" : r.error ?? "unreachable",
        ]),
      );
    }
    return rows.every((r) => r.reachable) ? 0 : 1;
  },
});
