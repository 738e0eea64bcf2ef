import { UsageError } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { defineVerb } from "./_verb.ts";

/** Parses `--listen` (`HOST:PORT`, `[V6]:PORT`, `:PORT` or `PORT`); pure. */
export function parseListen(value: string): { hostname: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]*)):(\d{1,5})$/.exec(value) ?? /^()()(\d{1,5})$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port <= 65535)) {
    throw new UsageError(
      `web: --listen "${value}" is not HOST:PORT (e.g. 127.0.0.1:8080, [::1]:8080 or 8080); see paneflow web --help`,
    );
  }
  return { hostname: m[1] || m[2] || "127.0.0.1", port };
}

export default defineVerb({
  name: "web",
  usage: "paneflow web [--listen 127.0.0.1:PORT] [--open] [--input] [--public-url URL]",
  details: [
    "A separate process: a client of the host's socket that serves one page and a WebSocket.",
    "Prints the URL with a fresh random token in its fragment (http://127.0.0.1:PORT/#token=...);",
    "every other request without that token is refused (401), and so is a WebSocket from a",
    "foreign Origin. Listens on loopback unless --listen names another address (then it warns).",
    "Input is off unless --input, and then needs the host's write gate (PANEFLOW_IPC_SCRIPTING=1",
    "or ai_unrestricted). Port 0 (the default) picks a free port. Ctrl-C stops. See docs/web.md.",
  ].join("\n"),
  options: {
    listen: {
      type: "string",
      value: "<host:port>",
      description: "Address to listen on (default 127.0.0.1:0)",
    },
    open: { type: "boolean", description: "Open the URL in the default browser" },
    input: { type: "boolean", description: "Let a focused tile type into its pane (needs the write gate)" },
    "public-url": {
      type: "string",
      value: "<url>",
      description: "Where this server is reachable from elsewhere, for reply links (docs/notify.md)",
    },
  },
  positionals: [],
  async run({ opts }) {
    const listen = parseListen(opts.listen ?? "127.0.0.1:0");
    const { startWeb } = await import("../web/server.ts");
    const { newToken } = await import("../web/auth.ts");
    const token = newToken();
    const log = (line: string) => console.error(line);
    let server;
    try {
      server = await startWeb({
        socket: socketPath(),
        ...listen,
        input: opts.input,
        token,
        log,
        publicUrl: opts["public-url"],
      });
    } catch (e) {
      if (e instanceof Deno.errors.AddrInUse) {
        throw new UsageError(
          `web: ${listen.hostname}:${listen.port} is already in use; pick another --listen`,
          { cause: e },
        );
      }
      throw new UsageError(
        `web: cannot listen on ${listen.hostname}:${listen.port}: ${(e as Error).message}`,
        { cause: e },
      );
    }
    const full = `${server.url}#token=${token}`;
    console.log(full);
    log(`paneflow web: serving ${server.url} for the host on ${socketPath()}; Ctrl-C stops`);
    if (opts.open) {
      const cmd = Deno.build.os === "darwin" ? "open" : "xdg-open";
      try {
        new Deno.Command(cmd, { args: [full], stdout: "null", stderr: "null", stdin: "null" }).spawn();
      } catch {
        log(`paneflow web: could not run ${cmd}; open the URL above yourself`);
      }
    }
    const stop = () => void server.close();
    Deno.addSignalListener("SIGINT", stop);
    Deno.addSignalListener("SIGTERM", stop);
    await server.finished;
    return 0;
  },
});
