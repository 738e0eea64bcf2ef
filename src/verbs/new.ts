import { connectOrStart } from "../client/autostart.ts";
import { PANE_OPTIONS } from "./_pane_options.ts";
import { defineVerb, printJson } from "./_verb.ts";
import { absoluteDir, withTmuxEnv } from "./_env.ts";

export default defineVerb({
  name: "new",
  usage:
    "paneflow new [--name <title>] [--cwd <dir>] [--command <cmd>] [--pane-name <name>] [--layout <l>] [--restart] [--engine <e>] [--caps <cap>=<scope>]",
  details: "Starts a detached host first when none answers (unless --no-autostart).",
  options: {
    name: { type: "string", value: "<title>", description: "Workspace title" },
    cwd: { type: "string", value: "<dir>", description: "Working directory (default: the current one)" },
    command: {
      type: "string",
      short: "c",
      value: "<cmd>",
      description: "Run this shell command instead of a shell",
    },
    "pane-name": {
      type: "string",
      value: "<name>",
      description: "Name of the first pane (a stable selector)",
    },
    layout: { type: "string", value: "<l>", description: "even_h (default), even_v, main_vertical or tiled" },
    ...PANE_OPTIONS,
    engine: {
      type: "string",
      value: "<e>",
      description: "What parses the pane's output: xterm or ghostty (default: the config's terminal.engine)",
    },
    "no-autostart": { type: "boolean", description: "Fail instead of starting a host" },
  },
  positionals: [],
  async run({ opts }) {
    const { parseEnvPairs } = await import("./_env.ts");
    const caps = opts.caps.length ? (await import("./_caps.ts")).parseCapsFlags(opts.caps) : null;
    const client = await connectOrStart(!opts["no-autostart"]);
    try {
      const params: Record<string, unknown> = { cwd: absoluteDir(opts.cwd) };
      if (opts.name !== undefined) params.name = opts.name;
      if (opts.command !== undefined) params.command = opts.command;
      if (opts["pane-name"] !== undefined) params.pane_name = opts["pane-name"];
      if (opts.layout !== undefined) params.layout = opts.layout;
      if (opts.engine !== undefined) params.engine = opts.engine;
      if (opts.env.length) params.env = parseEnvPairs(opts.env);
      if (caps) params.caps = caps;
      if (opts["tmux-compat"]) {
        params.env = await withTmuxEnv(params.env as Record<string, string> | undefined);
      }
      if (opts.restart) params.restart = true;
      printJson(await client.call("workspace.create", params));
      return 0;
    } finally {
      client.close();
    }
  },
});
