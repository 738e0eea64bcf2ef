import { defineVerb } from "./_verb.ts";

export default defineVerb({
  name: "tmux",
  usage: "paneflow tmux [-L name | -S socket] <tmux command> [flags] [args]",
  details: "Speaks tmux 3.3a's commands and formats on this host's workspaces and panes; the same " +
    "program runs as `tmux` when invoked by that name (a symlink, or the shim on a pane's PATH). " +
    "See docs/tmux.md for the mapping and what differs.",
  options: {},
  positionals: [],
  passThrough: true,
  async run({ args }) {
    const { runTmux } = await import("../tmux/mod.ts");
    return await runTmux(args);
  },
});
