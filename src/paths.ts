/**
 * Where the host's socket lives (README.md) and how to start this program
 * again (for `serve --detach`). No dependencies: the CLI path imports this.
 *
 * @module
 */

/** Environment lookup, injectable for tests. */
export type Env = { get(key: string): string | undefined };

/**
 * `$PANEFLOW_SOCKET_PATH` (relative to the working directory), else
 * `$XDG_RUNTIME_DIR/paneflow/paneflow.sock`, else `/tmp/paneflow-$UID/paneflow.sock`.
 */
export function socketPath(env: Env = Deno.env): string {
  const explicit = env.get("PANEFLOW_SOCKET_PATH");
  // Made absolute: the host hands it to panes, whose working directories differ.
  if (explicit) return explicit.startsWith("/") ? explicit : `${Deno.cwd()}/${explicit.replace(/^\.\//, "")}`;
  const runtime = env.get("XDG_RUNTIME_DIR");
  if (runtime) return `${runtime}/paneflow/paneflow.sock`;
  return `/tmp/paneflow-${Deno.uid() ?? "user"}/paneflow.sock`;
}

/** Where the config file is read from: `$PANEFLOW_CONFIG`, else `$XDG_CONFIG_HOME` or `~/.config`. */
export function configPath(env: Env = Deno.env): string {
  const explicit = env.get("PANEFLOW_CONFIG");
  if (explicit) return explicit;
  const xdg = env.get("XDG_CONFIG_HOME");
  const base = xdg || `${env.get("HOME") ?? "."}/.config`;
  return `${base}/paneflow/config.jsonc`;
}

/** The directory part of a path. */
export function dirname(path: string): string {
  const i = path.lastIndexOf("/");
  return i <= 0 ? (i === 0 ? "/" : ".") : path.slice(0, i);
}

/**
 * V8 flags for the host: a 1 MiB semi-space keeps the pane workers' young
 * generation small (bench/: 5.5 → 2.7 MiB per pane, about 4% less ingest);
 * a heap that grows by half of what is live before V8 collects again keeps a
 * busy worker's heap from swinging: by its own measure V8 let the soak's
 * busy worker (22 MB live) grow to 73 MB between collections, a saw of
 * ~50 MiB in the host's RSS, 22–36 MB with the flag (docs/hardening.md);
 * `gc()` lets a pane worker collect a flood's garbage before it hands freed
 * memory back (./core/pane/release.ts). `deno task compile` bakes them
 * into the binary.
 */
export const HOST_V8_FLAGS = "--max-semi-space-size=1,--heap-growing-percent=50,--expose-gc";

/**
 * The argv that runs this program with `args`: the compiled binary itself,
 * or `deno run -A <main.ts or the bundle's main.js>` with the project's config
 * (`host: true` adds {@link HOST_V8_FLAGS} there).
 */
export function selfCommand(args: string[], opts: { host?: boolean } = {}): string[] {
  const exe = Deno.execPath();
  const base = exe.slice(exe.lastIndexOf("/") + 1);
  if (!/^deno(\.exe)?$/.test(base)) return [exe, ...args];
  const main = new URL(Deno.mainModule);
  const v8 = opts.host ? [`--v8-flags=${HOST_V8_FLAGS}`] : [];
  return [exe, "run", "-A", "--quiet", ...v8, `--config=${projectConfig(main)}`, filePath(main), ...args];
}

/** The deno.json beside main.ts, or above the bundled CLI's main.js (dist/cli/). */
function projectConfig(main: URL): string {
  for (let dir = new URL(".", main); dir.pathname !== "/"; dir = new URL("..", dir)) {
    const config = new URL("deno.json", dir);
    try {
      if (Deno.statSync(config).isFile) return filePath(config);
    } catch { /* not here */ }
  }
  return filePath(new URL("deno.json", main));
}

/** A file: URL's path, decoded (a space is %20 in the URL). */
function filePath(url: URL): string {
  return decodeURIComponent(url.pathname);
}
