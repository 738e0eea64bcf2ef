import { UsageError } from "../errors.ts";
import { withClient } from "../client/client.ts";
import { defineVerb, printJson } from "./_verb.ts";

export default defineVerb({
  name: "adapter",
  usage: [
    "paneflow adapter start <plugin> [--cwd <dir>] [--env K=V]... [-- <args>...]",
    "       paneflow adapter turn <adapter> <prompt> [--timeout <s>] [--text]",
    "       paneflow adapter send <adapter> <intent> [--params <json>]",
    "       paneflow adapter state|inspect|close <adapter>",
    "       paneflow adapter live",
  ].join("\n"),
  details: [
    "start runs the plugin's program (claude-code: claude) in a new pane of the host and",
    "prints {adapter, plugin, session, state}; arguments after -- go to the program.",
    "turn sends the prompt (send_prompt) and waits for the turn to end (wait_turn_matcher):",
    "it prints {state, matched}, or with --text only the turn's text (metadata.turn.text).",
    "It exits 1 when the turn ends in `error` or `plugin_error`, 4 on a timeout.",
    "The adapter lives in the host until `adapter close`. See docs/plugins.md.",
  ].join("\n"),
  options: {
    cwd: { type: "string", value: "<dir>", description: "start: the program's working directory" },
    env: { type: "string", value: "K=V", multiple: true, description: "start: an environment variable" },
    program: {
      type: "string",
      value: "<path>",
      description: "start: run this instead of the plugin's default",
    },
    timeout: { type: "number", value: "<s>", description: "turn: seconds to wait (default 120)" },
    text: { type: "boolean", description: "turn: print only the turn's text" },
    params: { type: "string", value: "<json>", description: "send: the intent's params as JSON" },
  },
  positionals: [{ name: "command" }, { name: "args", optional: true, rest: true }],
  async run({ opts, args }) {
    const [cmd, ...rest] = args;
    const need = (n: number, what: string) => {
      if (rest.length < n) throw new UsageError(`Missing ${what} for paneflow adapter ${cmd}`);
    };
    return await withClient(async (c) => {
      switch (cmd) {
        case "start": {
          need(1, "<plugin>");
          const env: Record<string, string> = {};
          for (const kv of opts.env) {
            const i = kv.indexOf("=");
            if (i <= 0) throw new UsageError(`--env wants K=V, got "${kv}"`);
            env[kv.slice(0, i)] = kv.slice(i + 1);
          }
          let cwd = opts.cwd ?? Deno.cwd();
          if (!cwd.startsWith("/")) cwd = `${Deno.cwd()}/${cwd}`;
          const params: Record<string, unknown> = { plugin: rest[0], cwd };
          if (Object.keys(env).length) params.env = env;
          if (opts.program) params.program = opts.program;
          if (rest.length > 1) params.args = rest.slice(1);
          printJson(await c.call("adapter.start", params));
          return 0;
        }
        case "turn": {
          need(2, "<adapter> <prompt>");
          const timeout_ms = Math.round((opts.timeout ?? 120) * 1000);
          let r;
          try {
            r = await c.call("adapter.turn", {
              adapter: rest[0],
              send: { intent: "send_prompt", params: { prompt: rest.slice(1).join(" ") } },
              wait: { timeout_ms },
            });
          } catch (e) {
            const { CliFailure } = await import("../errors.ts");
            if ((e as { code?: number }).code === -32001) {
              throw new CliFailure((e as Error).message, 4, { cause: e });
            }
            throw e;
          }
          // `metadata` is the plugin's own: claude-code puts the turn's reply in `turn.text`.
          if (opts.text) console.log((r.state.metadata?.turn as { text?: string } | undefined)?.text ?? "");
          else printJson(r);
          return r.state.state === "error" || r.state.state === "plugin_error" ? 1 : 0;
        }
        case "send": {
          need(2, "<adapter> <intent>");
          let params: unknown = {};
          if (opts.params !== undefined) {
            try {
              params = JSON.parse(opts.params);
            } catch {
              throw new UsageError("--params must be JSON");
            }
          }
          printJson(await c.call("adapter.send", { adapter: rest[0], intent: rest[1], params }));
          return 0;
        }
        case "state":
        case "inspect":
        case "close":
          need(1, "<adapter>");
          printJson(await c.call(`adapter.${cmd}`, { adapter: rest[0] }));
          return 0;
        case "live":
          printJson(await c.call("adapter.live", {}));
          return 0;
        default:
          throw new UsageError(
            `Unknown adapter command "${cmd}"; expected start, turn, send, state, inspect, close or live`,
          );
      }
    });
  },
});
