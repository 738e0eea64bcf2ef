/**
 * tmux's command table, as far as paneflow speaks it: each command's alias,
 * its getopt string (a letter followed by ":" takes a value) and its usage
 * line, copied from `tmux list-commands` of tmux 3.3a so errors read the same.
 *
 * @module
 */

/** One tmux command. */
export interface CommandSpec {
  name: string;
  alias?: string;
  /** tmux's getopt string: "dhvPc:F:" */
  flags: string;
  /** Most positional arguments (Infinity for a shell command or keys). */
  maxArgs: number;
  minArgs?: number;
  usage: string;
}

const T: CommandSpec[] = [
  {
    name: "attach-session",
    alias: "attach",
    flags: "dErxc:f:t:",
    maxArgs: 0,
    usage: "[-dErx] [-c working-directory] [-f flags] [-t target-session]",
  },
  {
    name: "capture-pane",
    alias: "capturep",
    flags: "aCeJNpPqb:E:S:t:",
    maxArgs: 0,
    usage: "[-aCeJNpPq] [-b buffer-name] [-E end-line] [-S start-line] [-t target-pane]",
  },
  {
    name: "display-message",
    alias: "display",
    flags: "aINpvc:d:F:t:",
    maxArgs: 1,
    usage: "[-aINpv] [-c target-client] [-d delay] [-F format] [-t target-pane] [message]",
  },
  { name: "has-session", alias: "has", flags: "t:", maxArgs: 0, usage: "[-t target-session]" },
  { name: "kill-pane", alias: "killp", flags: "at:", maxArgs: 0, usage: "[-a] [-t target-pane]" },
  { name: "kill-server", flags: "", maxArgs: 0, usage: "" },
  { name: "kill-session", flags: "aCt:", maxArgs: 0, usage: "[-aC] [-t target-session]" },
  { name: "kill-window", alias: "killw", flags: "at:", maxArgs: 0, usage: "[-a] [-t target-window]" },
  {
    name: "list-panes",
    alias: "lsp",
    flags: "asF:f:t:",
    maxArgs: 0,
    usage: "[-as] [-F format] [-f filter] [-t target-window]",
  },
  { name: "list-sessions", alias: "ls", flags: "F:f:", maxArgs: 0, usage: "[-F format] [-f filter]" },
  {
    name: "list-windows",
    alias: "lsw",
    flags: "aF:f:t:",
    maxArgs: 0,
    usage: "[-a] [-F format] [-f filter] [-t target-session]",
  },
  {
    name: "new-session",
    alias: "new",
    flags: "AdDEPXc:e:F:f:n:s:t:x:y:",
    maxArgs: Infinity,
    usage: "[-AdDEPX] [-c start-directory] [-e environment] [-F format] [-f flags] [-n window-name] " +
      "[-s session-name] [-t target-session] [-x width] [-y height] [shell-command]",
  },
  {
    name: "new-window",
    alias: "neww",
    flags: "abdkPSc:e:F:n:t:",
    maxArgs: Infinity,
    usage:
      "[-abdkPS] [-c start-directory] [-e environment] [-F format] [-n window-name] [-t target-window] [shell-command]",
  },
  {
    name: "rename-session",
    alias: "rename",
    flags: "t:",
    maxArgs: 1,
    minArgs: 1,
    usage: "[-t target-session] new-name",
  },
  {
    name: "rename-window",
    alias: "renamew",
    flags: "t:",
    maxArgs: 1,
    minArgs: 1,
    usage: "[-t target-window] new-name",
  },
  {
    name: "resize-pane",
    alias: "resizep",
    flags: "DLMRTUZx:y:t:",
    maxArgs: 1,
    usage: "[-DLMRTUZ] [-x width] [-y height] [-t target-pane] [adjustment]",
  },
  {
    name: "respawn-pane",
    alias: "respawnp",
    flags: "kc:e:t:",
    maxArgs: Infinity,
    usage: "[-k] [-c start-directory] [-e environment] [-t target-pane] [shell-command]",
  },
  {
    name: "select-layout",
    alias: "selectl",
    flags: "Enopt:",
    maxArgs: 1,
    usage: "[-Enop] [-t target-pane] [layout-name]",
  },
  {
    name: "select-pane",
    alias: "selectp",
    flags: "DdeLlMmRUZT:t:",
    maxArgs: 0,
    usage: "[-DdeLlMmRUZ] [-T title] [-t target-pane]",
  },
  {
    name: "select-window",
    alias: "selectw",
    flags: "lnpTt:",
    maxArgs: 0,
    usage: "[-lnpT] [-t target-window]",
  },
  {
    name: "send-keys",
    alias: "send",
    flags: "FHlMRXN:t:",
    maxArgs: Infinity,
    usage: "[-FHlMRX] [-N repeat-count] [-t target-pane] key ...",
  },
  {
    name: "set-option",
    alias: "set",
    flags: "aFgopqsuUwt:",
    maxArgs: 2,
    minArgs: 1,
    usage: "[-aFgopqsuUw] [-t target-pane] option [value]",
  },
  {
    name: "set-window-option",
    alias: "setw",
    flags: "aFgoqut:",
    maxArgs: 2,
    minArgs: 1,
    usage: "[-aFgoqu] [-t target-window] option [value]",
  },
  {
    name: "show-options",
    alias: "show",
    flags: "AgHpqsvwt:",
    maxArgs: 1,
    usage: "[-AgHpqsvw] [-t target-pane] [option]",
  },
  {
    name: "show-window-options",
    alias: "showw",
    flags: "gvt:",
    maxArgs: 1,
    usage: "[-gv] [-t target-window] [option]",
  },
  {
    name: "split-window",
    alias: "splitw",
    flags: "bdefhIPvZc:e:F:l:p:t:",
    maxArgs: Infinity,
    usage:
      "[-bdefhIPvZ] [-c start-directory] [-e environment] [-F format] [-l size] [-t target-pane][shell-command]",
  },
  {
    name: "switch-client",
    alias: "switchc",
    flags: "ElnprZc:t:T:",
    maxArgs: 0,
    usage: "[-ElnprZ] [-c target-client] [-t target-session] [-T key-table]",
  },
  { name: "wait-for", alias: "wait", flags: "LSU", maxArgs: 1, minArgs: 1, usage: "[-L|-S|-U] channel" },
];

/** The commands by name and alias. */
export const COMMANDS: ReadonlyMap<string, CommandSpec> = new Map(
  T.flatMap((c) => (c.alias ? [[c.name, c], [c.alias, c]] : [[c.name, c]])),
);

/**
 * Finds a command as tmux does: its name, its alias, or an unambiguous
 * prefix of a name. `null` when none matches; a list when several do.
 */
export function findCommand(word: string): CommandSpec | CommandSpec[] | null {
  const exact = COMMANDS.get(word);
  if (exact) return exact;
  const found = T.filter((c) => c.name.startsWith(word));
  if (found.length === 1) return found[0];
  return found.length ? found : null;
}
