import { Client, withClient } from "../client/client.ts";
import { resolveMany } from "../client/selectors.ts";
import { CliFailure } from "../errors.ts";
import { defineVerb } from "./_verb.ts";

export default defineVerb({
  name: "watch",
  usage: "paneflow watch [--surface <sel>]... [--type <event>]...",
  details: [
    'The first line is the ack {"type":"subscribed","id":1}. Types: ai.session_start,',
    "ai.prompt_submit, ai.tool_use, ai.notification, ai.stop, ai.exit, ai.session_end,",
    "agent_state (every agent state change), surface_changed, surface_created, surface_renamed,",
    "surface_exited, surface_closed, workspace_created, workspace_closed; heartbeat and dropped",
    "frames always pass. Exits 1 when the host goes away.",
  ].join("\n"),
  options: {
    surface: { type: "string", multiple: true, value: "<sel>", description: "Only events of these panes" },
    type: { type: "string", multiple: true, value: "<event>", description: "Only these event types" },
  },
  positionals: [],
  async run({ opts }) {
    const params: Record<string, unknown> = {};
    if (opts.surface.length) {
      // Selectors resolve on their own connection, so the subscribe request
      // is always request 1 and the ack reads {"type":"subscribed","id":1}.
      params.surfaces = await withClient(async (c) => {
        const ids = new Set<number>();
        for (const sel of opts.surface) {
          for (const p of await resolveMany(c, sel)) ids.add(p.surface_id);
        }
        return [...ids];
      });
    }
    if (opts.type.length) params.types = opts.type;
    const client = await Client.connect();
    try {
      const ack = await client.subscribe(params);
      if (!emit(ack.text)) return 0;
      while (true) {
        const msg = await client.next();
        if (msg === null) throw new CliFailure("The host went away");
        if (!emit(msg.text)) return 0;
      }
    } finally {
      client.close();
    }
  },
});

const encoder = new TextEncoder();

/**
 * Writes one line to stdout at once (no buffering, so a pipe sees each frame
 * as it comes); false when the reader has gone (`watch | head -1`), which
 * ends the watch like Ctrl-C does.
 */
function emit(line: string): boolean {
  const bytes = encoder.encode(line + "\n");
  try {
    let off = 0;
    while (off < bytes.length) off += Deno.stdout.writeSync(bytes.subarray(off));
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.BrokenPipe) return false;
    throw e;
  }
}
