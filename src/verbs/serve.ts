import { CliFailure, errorChain, UsageError } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { defineVerb } from "./_verb.ts";

export default defineVerb({
  name: "serve",
  usage:
    "paneflow serve [--detach | --stdio [--framing ndjson|lsp] | --socket <path>] [--log <file>] [--queue <dir>] [--restore]",
  details: [
    "Socket: $PANEFLOW_SOCKET_PATH, else $XDG_RUNTIME_DIR/paneflow/paneflow.sock,",
    "else /tmp/paneflow-$UID/paneflow.sock. Config: $PANEFLOW_CONFIG or",
    "~/.config/paneflow/config.jsonc. SIGTERM, SIGINT or SIGHUP stops the host; panes get SIGHUP.",
    "",
    "--stdio serves the protocol on stdin/stdout (stdout carries only protocol messages;",
    "the log goes to stderr) for the program that started it: a private host, on a socket",
    "of its own in a fresh temp directory (system.identify names it; panes get it as",
    "PANEFLOW_SOCKET_PATH), that stops when stdin ends.",
    "",
    "--plugin <manifest> loads an adapter plugin at start (repeatable); --allow-plugin-load",
    "lets clients load and unload plugins (plugin.load / plugin.unload, docs/plugins.md).",
    "",
    "--restore brings back the last host's workspaces on this socket at start (config",
    '`restore`: "off", "ask" (default: journal kept, `paneflow restore` brings it back), "on";',
    "docs/restore.md).",
    "",
    "--socket <path> runs the host on that socket instead of the default one. Every",
    "transport also speaks ptywright's server.* / session.* protocol (docs/ptywright.md).",
  ].join("\n"),
  options: {
    detach: { type: "boolean", description: "Start in the background and return once the socket answers" },
    stdio: { type: "boolean", description: "Serve on stdin/stdout until stdin ends" },
    socket: {
      type: "string",
      value: "<path>",
      description: "Serve on this socket instead of the default one",
    },
    framing: {
      type: "string",
      value: "<ndjson|lsp>",
      description: "With --stdio: one JSON message per line (default) or Content-Length headers",
    },
    log: {
      type: "string",
      value: "<file>",
      description: "Append the host's log to a file instead of stderr",
    },
    plugin: {
      type: "string",
      value: "<manifest>",
      multiple: true,
      description: "Load a trusted-local adapter plugin at start (docs/plugins.md)",
    },
    "allow-plugin-load": {
      type: "boolean",
      description: "Let clients call plugin.load / plugin.unload",
    },
    restore: {
      type: "boolean",
      description: "Restore the last host's workspaces at start (docs/restore.md)",
    },
    queue: {
      type: "string",
      value: "<dir>",
      description: "Deliver the agent message queue under <dir> (queue/, status/agents/; docs/paneio.md)",
    },
  },
  positionals: [],
  async run({ opts }) {
    // A user's exported PANEFLOW_HOST points their CLI at a remote host; the panes of this host must
    // drive this host, so their environment (inherited from ours) must not carry it.
    Deno.env.delete("PANEFLOW_HOST");
    if (opts.framing !== undefined && !opts.stdio) throw new UsageError("--framing needs --stdio");
    if (opts.framing !== undefined && opts.framing !== "ndjson" && opts.framing !== "lsp") {
      throw new UsageError(`--framing must be ndjson or lsp, not ${JSON.stringify(opts.framing)}`);
    }
    if (opts.stdio && opts.detach) throw new UsageError("--stdio and --detach are exclusive");
    if (opts.stdio && opts.socket !== undefined) {
      throw new UsageError("serve accepts only one transport: use either --stdio or --socket");
    }
    if (opts.socket !== undefined && !opts.socket) throw new UsageError("--socket needs a path");
    const privateDir = opts.stdio ? await Deno.makeTempDir({ prefix: "paneflow-stdio-" }) : null;
    const path = privateDir ? `${privateDir}/paneflow.sock` : opts.socket ?? socketPath();
    if (opts.detach) {
      const { startDetached } = await import("../client/autostart.ts");
      const queue = opts.queue === undefined
        ? []
        : ["--queue", opts.queue.startsWith("/") ? opts.queue : `${Deno.cwd()}/${opts.queue}`];
      const args = [...queue, ...(opts.restore ? ["--restore"] : [])];
      console.log(await startDetached(path, { args }));
      return 0;
    }
    const { startHost } = await import("../server/host.ts");
    let log: ((line: string) => void) | undefined;
    if (opts.log) {
      const file = await Deno.open(opts.log, { append: true, create: true, mode: 0o600 });
      const enc = new TextEncoder();
      log = (line) => file.writeSync(enc.encode(`${new Date().toISOString()} paneflow: ${line}\n`));
      // A detached host's stderr goes nowhere: what the host (or a library) writes
      // there — the stack behind a -32603, a failed worker — goes to the log too.
      const write = log;
      console.error = (...parts: unknown[]) => {
        const text = parts.map((p) => p instanceof Error ? errorChain(p) : String(p)).join(" ");
        write(text.replace(/^paneflow: /, ""));
      };
      globalThis.addEventListener("unhandledrejection", (e) => {
        e.preventDefault();
        const r = e.reason;
        write(`internal error (unhandled): ${errorChain(r)}`);
      });
    }
    const stdio = opts.stdio ? { framing: (opts.framing ?? "ndjson") as "ndjson" | "lsp" } : undefined;
    try {
      let host;
      try {
        host = await startHost({
          socketPath: path,
          signals: true,
          log,
          stdio,
          plugins: { manifests: opts.plugin, allowLoad: opts["allow-plugin-load"] },
          queueRoot: opts.queue,
          ...(opts.restore ? { restore: "on" as const } : {}),
        });
      } catch (e) {
        // A bad config, a live host on the path, a path too long: the user's to fix,
        // not an internal error. The log line lets `serve --detach` report it.
        const message = (e as Error).message.split("\n")[0];
        log?.(message);
        throw new CliFailure(message, undefined, { cause: e });
      }
      await host.done;
      return 0;
    } finally {
      if (privateDir) await Deno.remove(privateDir, { recursive: true }).catch(() => {});
    }
  },
});
