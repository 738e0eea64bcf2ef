/**
 * Where the host's socket lives (SPEC §2) and how to start this program
 * again (for `serve --detach`). No dependencies: the CLI path imports this.
 *
 * @module
 */

/** Environment lookup, injectable for tests. */
export type Env = { get(key: string): string | undefined };

/**
 * `$PANEFLOW_SOCKET_PATH`, else `$XDG_RUNTIME_DIR/paneflow/paneflow.sock`,
 * else `/tmp/paneflow-$UID/paneflow.sock`.
 */
export function socketPath(env: Env = Deno.env): string {
  const explicit = env.get("PANEFLOW_SOCKET_PATH");
  if (explicit) return explicit;
  const runtime = env.get("XDG_RUNTIME_DIR");
  if (runtime) return `${runtime}/paneflow/paneflow.sock`;
  return `/tmp/paneflow-${Deno.uid() ?? "user"}/paneflow.sock`;
}

/** The directory part of a path. */
export function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? (i === 0 ? "/" : ".") : path.slice(0, i);
}

/**
 * The argv that runs this program with `args`: the compiled binary itself,
 * or `deno run -A <main.ts>` with the project's config in development.
 */
export function selfCommand(args: string[]): string[] {
  const exe = Deno.execPath();
  const base = exe.slice(exe.lastIndexOf("/") + 1);
  if (!/^deno(\.exe)?$/.test(base)) return [exe, ...args];
  const main = new URL(Deno.mainModule);
  const config = new URL("./deno.json", main);
  return [exe, "run", "-A", "--quiet", `--config=${config.pathname}`, main.pathname, ...args];
}
