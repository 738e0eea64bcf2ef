import { CliFailure } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { defineVerb } from "./_verb.ts";

/**
 * `paneflow relay`: joins stdin and stdout to the host's socket, byte for byte
 * (the protocol's NDJSON framing passes through unchanged), like `nc -U`. It
 * is what `--host` runs on the far side of `ssh`: `ssh box paneflow relay`.
 * It starts no host unless `--start` says so; it ends when either side closes.
 */
export default defineVerb({
  name: "relay",
  usage: "paneflow relay [--socket <path>] [--start]",
  details: "Bytes pass through unchanged in both directions. Exit 1, with one line on stderr, when no host " +
    "answers (unless --start starts one). The relay ends when stdin ends and the host has answered, " +
    "or when the host closes the connection.",
  options: {
    socket: { type: "string", value: "<path>", description: "The host's socket (default: as every verb)" },
    start: { type: "boolean", description: "Start a detached host when none answers" },
  },
  positionals: [],
  async run({ opts }) {
    const path = opts.socket ?? socketPath();
    let conn: Deno.UnixConn;
    try {
      conn = await Deno.connect({ transport: "unix", path });
    } catch (e) {
      if (!opts.start) {
        throw new CliFailure(
          `No paneflow host answers on ${path} on ${Deno.hostname()} (${(e as Error).message}); ` +
            "start one there with `paneflow serve --detach`",
          undefined,
          { cause: e },
        );
      }
      const { startDetached } = await import("../client/autostart.ts");
      await startDetached(path, { shared: true });
      conn = await Deno.connect({ transport: "unix", path });
    }
    const up = (async () => {
      try {
        await Deno.stdin.readable.pipeTo(conn.writable, { preventClose: true });
        await conn.closeWrite();
      } catch { /* the host closed first */ }
    })();
    try {
      await conn.readable.pipeTo(Deno.stdout.writable, { preventClose: true });
    } catch { /* stdout closed: the client went away */ }
    // The host closed its side: whatever stdin still sends has nowhere to go.
    void up;
    return 0;
  },
});
