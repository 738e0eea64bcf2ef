import { UsageError } from "../errors.ts";

/** Parses repeated `--env KEY=VALUE` options. */
export function parseEnvPairs(pairs: string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`Option "--env" needs KEY=VALUE, got "${pair}"`);
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

/**
 * A directory option as the host must see it: relative paths are the
 * caller's, so they are made absolute here (the host's cwd is elsewhere);
 * none means the caller's current directory.
 */
export function absoluteDir(dir: string | undefined): string {
  if (dir === undefined || dir === "") return Deno.cwd();
  if (dir.startsWith("/")) return dir;
  if (dir === "~" || dir.startsWith("~/")) return (Deno.env.get("HOME") ?? "") + dir.slice(1);
  return `${Deno.cwd()}/${dir}`;
}

/** `--tmux-compat`: `env` with TMUX and the tmux shim first on PATH for this host (docs/tmux.md). */
export async function withTmuxEnv(env: Record<string, string> | undefined): Promise<Record<string, string>> {
  const { clientAddress, isRemote } = await import("../client/client.ts");
  const address = clientAddress();
  if (isRemote(address)) {
    throw new UsageError(`--tmux-compat works on this machine's host only, not on "${address}"`);
  }
  const { shimEnv } = await import("../tmux/shim.ts");
  return { ...shimEnv(address, Deno.env), ...env };
}
