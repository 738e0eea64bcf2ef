/**
 * The options `new` and `split` share: what the new pane may do, how it
 * comes back after a restore, its environment, and the tmux shim.
 *
 * @module
 */

/** Spread into the verb's `options`. */
export const PANE_OPTIONS = {
  caps: {
    type: "string",
    multiple: true,
    value: "<cap>=<scope>",
    description:
      "What the pane's programs may do: write=worker-*,reviewer read=workspace (see paneflow caps)",
  },
  restart: {
    type: "boolean",
    description: "After a restore, run the command again instead of a shell with a note (docs/restore.md)",
  },
  env: {
    type: "string",
    multiple: true,
    value: "<KEY=VALUE>",
    description: "Set an environment variable in the pane",
  },
  "tmux-compat": {
    type: "boolean",
    description: "Give the pane TMUX, TMUX_PANE and the tmux shim first on PATH (docs/tmux.md)",
  },
} as const;
