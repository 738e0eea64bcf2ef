/**
 * Named remote hosts (`hosts.<name>` in the config) and `--host` /
 * `PANEFLOW_HOST` resolution. Loading the config costs the npm parsers, so
 * only a named host pays it; an `ssh://` URL needs no config.
 *
 * @module
 */
import type { Env } from "../paths.ts";
import { parseHostArg, type RemoteTarget } from "./ssh.ts";

/** The remote host a verb should talk to: `--host`, else `$PANEFLOW_HOST`, else null (local). */
export function hostArg(flag: string | undefined, env: Env = Deno.env): string | null {
  return flag || env.get("PANEFLOW_HOST") || null;
}

/** Every named host of the config, as targets, in the config's order. */
export async function namedHosts(): Promise<RemoteTarget[]> {
  const { loadConfig } = await import("../spec/config.ts");
  const config = await loadConfig();
  return Object.entries(config.hosts).map(([name, h]) => toTarget(name, h));
}

function toTarget(name: string, h: { ssh: string; paneflow: string; socket?: string }): RemoteTarget {
  if (h.ssh.startsWith("ssh://")) {
    const parsed = parseHostArg(h.ssh);
    if (parsed.kind !== "url") throw new Error(`Invalid hosts.${name}.ssh "${h.ssh}"`);
    return { ...parsed.target, label: name, paneflow: h.paneflow, socket: h.socket };
  }
  if (h.ssh.startsWith("-") || /\s/.test(h.ssh)) {
    throw new Error(`Invalid hosts.${name}.ssh "${h.ssh}": expected [user@]host or ssh://[user@]host[:port]`);
  }
  return { label: name, destination: h.ssh, paneflow: h.paneflow, socket: h.socket };
}

/** Resolves a `--host` value to a target; a name must be in the config's `hosts`. */
export async function resolveHost(value: string): Promise<RemoteTarget> {
  const parsed = parseHostArg(value);
  if (parsed.kind === "url") return parsed.target;
  const all = await namedHosts();
  const found = all.find((t) => t.label === parsed.name);
  if (!found) {
    const names = all.map((t) => t.label);
    throw new Error(
      `No host "${parsed.name}" in the config's "hosts"` +
        (names.length ? ` (known: ${names.join(", ")})` : '; add hosts.<name> = {ssh: "user@box"}') +
        ", or give ssh://[user@]host[:port]",
    );
  }
  return found;
}

/** Selector prefixes that are not host names. */
const SELECTOR_KINDS = new Set(["cmdline", "cwd", "pane"]);

/**
 * Splits `host:selector` (`wait --match box:agent`): when the part before the
 * first `:` names a host of the config, the selector applies there; otherwise
 * the whole string is a local selector. Only a selector with such a prefix
 * pays for reading the config.
 */
export async function splitHostSelector(
  selector: string,
): Promise<{ host: string | null; selector: string }> {
  const m = /^([A-Za-z0-9][A-Za-z0-9._-]{0,63}):(.+)$/s.exec(selector);
  if (!m || SELECTOR_KINDS.has(m[1])) return { host: null, selector };
  const hosts = await namedHosts().catch(() => []);
  return hosts.some((h) => h.label === m[1]) ? { host: m[1], selector: m[2] } : { host: null, selector };
}
