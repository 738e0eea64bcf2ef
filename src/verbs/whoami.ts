import { withClient } from "../client/client.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { formatScope } from "./_caps.ts";

/** `system.identify`'s caller. */
export interface CallerInfo {
  kind: "owner" | "pane" | "guest" | "host";
  pid: number | null;
  surface_id?: number;
  name?: string | null;
  why: string;
  caps: Record<string, string | string[]>;
}

/** The caller in one phrase: `pane 3 "worker-1"`, `the owner`, `a guest`. */
export function callerPhrase(c: CallerInfo): string {
  if (c.kind === "pane") return `pane ${c.surface_id}${c.name ? ` "${c.name}"` : ""}`;
  return c.kind === "guest" ? "a guest" : c.kind === "host" ? "the host" : "the owner";
}

/** Grants in one line: `read=workspace msg=workspace hook=self`. */
export function grantsLine(caps: Record<string, string | string[]>): string {
  const items = Object.entries(caps).map(([c, s]) => `${c}=${formatScope(s)}`);
  return items.length ? items.join(" ") : "nothing";
}

export default defineVerb({
  name: "whoami",
  usage: "paneflow whoami [--json]",
  details: [
    "Who the host takes this process for (the owner, a pane, or a guest), why, and what it may do.",
    "Run it inside a pane before planning: a refused call names the grant it lacks. See docs/security.md.",
  ].join("\n"),
  options: { json: { type: "boolean", description: "Print the caller as JSON" } },
  positionals: [],
  run({ opts }) {
    return withClient(async (client) => {
      const { caller } = await client.call("system.identify");
      if (opts.json) {
        printJson(caller);
        return 0;
      }
      console.log(`${callerPhrase(caller)} (${caller.why})`);
      console.log(
        `may: ${
          caller.kind === "owner" || caller.kind === "host" ? "everything (all)" : grantsLine(caller.caps)
        }`,
      );
      return 0;
    });
  },
});
