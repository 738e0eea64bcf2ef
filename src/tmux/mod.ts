/**
 * `paneflow tmux <tmux arguments>` and the program run as `tmux`: parses
 * tmux's command line, finds the host (`-S path` is a paneflow socket, `-L
 * name` the socket `<name>.sock` beside the default one, else the pane's own
 * host), runs the command and answers as tmux 3.3a would (docs/tmux.md).
 *
 * @module
 */
import { Client } from "../client/client.ts";
import { dirname, socketPath } from "../paths.ts";
import { parseCommand, parseGlobals, TmuxError } from "./args.ts";
import { runCommand } from "./commands.ts";

/** The socket the global options and environment select. */
export function selectSocket(
  globals: { socketName?: string; socketPath?: string },
  env: { get(k: string): string | undefined },
): string {
  if (globals.socketPath !== undefined) return globals.socketPath;
  if (globals.socketName !== undefined && globals.socketName !== "default") {
    return `${dirname(socketPath(env))}/${globals.socketName}.sock`;
  }
  const tmux = env.get("TMUX");
  if (tmux) return tmux.slice(0, tmux.lastIndexOf(",", tmux.lastIndexOf(",") - 1));
  return socketPath(env);
}

/** Runs tmux's argv; returns the exit code (0 or 1, as tmux's). */
export async function runTmux(argv: string[], env = Deno.env): Promise<number> {
  const out: string[] = [];
  const err: string[] = [];
  let code = 0;
  try {
    const { globals, rest } = parseGlobals(argv);
    if (globals.version) {
      out.push("tmux 3.3a (paneflow)");
    } else {
      const cmd = parseCommand(rest.length ? rest : ["new-session"]);
      const socket = selectSocket(globals, env);
      let client: Client;
      try {
        client = await Client.connect(socket);
      } catch {
        throw new TmuxError(`no server running on ${socket}`);
      }
      try {
        await runCommand(cmd, { client, socket, env, out, err });
      } finally {
        client.close();
      }
    }
  } catch (e) {
    code = 1;
    const message = e instanceof TmuxError ? e.message : (e as Error).message;
    if (message) err.push(message);
  }
  const enc = new TextEncoder();
  if (out.length) Deno.stdout.writeSync(enc.encode(out.join("\n") + "\n"));
  if (err.length) Deno.stderr.writeSync(enc.encode(err.join("\n") + "\n"));
  return code;
}
