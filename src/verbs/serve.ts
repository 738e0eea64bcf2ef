import { CliFailure } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { defineVerb } from "./_verb.ts";

export default defineVerb({
  name: "serve",
  summary: "Run the host: owns every pane's PTY and answers JSON-RPC on the socket",
  usage: "paneflow serve [--detach] [--log <file>]",
  details: [
    "Socket: $PANEFLOW_SOCKET_PATH, else $XDG_RUNTIME_DIR/paneflow/paneflow.sock,",
    "else /tmp/paneflow-$UID/paneflow.sock. Config: $PANEFLOW_CONFIG or",
    "~/.config/paneflow/config.jsonc. SIGTERM or SIGINT stops the host; panes get SIGHUP.",
  ].join("\n"),
  options: {
    detach: { type: "boolean", description: "Start in the background and return once the socket answers" },
    log: {
      type: "string",
      value: "<file>",
      description: "Append the host's log to a file instead of stderr",
    },
  },
  positionals: [],
  async run({ opts }) {
    const path = socketPath();
    if (opts.detach) {
      const { startDetached } = await import("./_host.ts");
      console.log(await startDetached(path));
      return 0;
    }
    const { startHost } = await import("../server/host.ts");
    let log: ((line: string) => void) | undefined;
    if (opts.log) {
      const file = await Deno.open(opts.log, { append: true, create: true, mode: 0o600 });
      const enc = new TextEncoder();
      log = (line) => file.writeSync(enc.encode(`${new Date().toISOString()} paneflow: ${line}\n`));
    }
    let host;
    try {
      host = await startHost({ socketPath: path, signals: true, log });
    } catch (e) {
      // A bad config, a live host on the path, a path too long: the user's to fix,
      // not an internal error. The log line lets `serve --detach` report it.
      const message = (e as Error).message.split("\n")[0];
      log?.(message);
      throw new CliFailure(message);
    }
    await host.done;
    return 0;
  },
});
