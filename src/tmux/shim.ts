/**
 * The `tmux` a pane finds first on its PATH: a directory beside the host's
 * socket holding a `tmux` launcher of this paneflow (a symlink to the
 * compiled binary, whose argv[0] dispatch runs `paneflow tmux`; from a
 * source checkout a script running `deno run -A main.ts tmux`), and the
 * environment tmux gives its panes (`TMUX`; the host adds `TMUX_PANE`).
 *
 * @module
 */
import { dirname, selfCommand } from "../paths.ts";

/** Quotes a word for sh. */
function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The shim directory for the host at `socket`, made if missing. */
export function ensureShimDir(socket: string): string {
  const dir = `${dirname(socket)}/tmux-shim`;
  const path = `${dir}/tmux`;
  try {
    Deno.statSync(path);
    return dir;
  } catch { /* made below */ }
  Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const self = selfCommand(["tmux"]);
  const tmp = `${path}.${Deno.pid}`;
  if (self.length === 2) {
    Deno.symlinkSync(self[0], tmp);
  } else {
    Deno.writeTextFileSync(tmp, `#!/bin/sh\nexec ${self.map(quote).join(" ")} "$@"\n`, { mode: 0o755 });
  }
  try {
    Deno.renameSync(tmp, path);
  } catch {
    Deno.removeSync(tmp);
  }
  return dir;
}

/** The `TMUX` value for the host at `socket`: socket path, server pid, session, as tmux writes it. */
export function tmuxValue(socket: string): string {
  return `${socket},0,0`;
}

/** What a pane made tmux-compatible gets in its environment: `TMUX` and the shim first on PATH. */
export function shimEnv(socket: string, env: { get(k: string): string | undefined }): Record<string, string> {
  const dir = ensureShimDir(socket);
  const path = (env.get("PATH") ?? "/usr/local/bin:/usr/bin:/bin").split(":").filter((d) => d !== dir);
  return { TMUX: tmuxValue(socket), PATH: [dir, ...path].join(":") };
}
