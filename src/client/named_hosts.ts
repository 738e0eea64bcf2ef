/**
 * Named remote hosts (`hosts.<name>` in the config) and `--host` /
 * `PANEFLOW_HOST` resolution. Every client verb may go remote, so this reads
 * the config without the host's npm parsers (the CLI path loads none): only
 * the `hosts` table is taken, from JSONC with comments and trailing commas
 * removed; the host validates the whole file with its schema when it starts.
 *
 * @module
 */
import { configPath, type Env } from "../paths.ts";
import { parseHostArg, type RemoteTarget } from "./ssh_target.ts";

/** The remote host a verb should talk to: `--host`, else `$PANEFLOW_HOST`, else null (local). */
export function hostArg(flag: string | undefined, env: Env = Deno.env): string | null {
  return flag || env.get("PANEFLOW_HOST") || null;
}

/** Every named host of the config, as targets, in the config's order. */
export async function namedHosts(): Promise<RemoteTarget[]> {
  const file = configPath();
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return [];
    throw new Error(`Cannot read the config ${file}: ${(e as Error).message}`, { cause: e });
  }
  let config: unknown;
  try {
    config = text.trim() ? JSON.parse(plainJson(text)) : {};
  } catch (e) {
    throw new Error(`Invalid config ${file}: ${(e as Error).message}`, { cause: e });
  }
  const hosts =
    (config && typeof config === "object" ? (config as Record<string, unknown>).hosts : undefined) ??
      {};
  if (typeof hosts !== "object" || Array.isArray(hosts)) {
    throw new Error(`Invalid config key "hosts" in ${file}`);
  }
  return Object.entries(hosts as Record<string, unknown>).map(([name, h]) => {
    const o = (h && typeof h === "object" ? h : {}) as Record<string, unknown>;
    const str = (k: string) => {
      const v = o[k];
      if (v !== undefined && (typeof v !== "string" || !v)) {
        throw new Error(`Invalid config key "hosts.${name}.${k}" in ${file}: expected a string`);
      }
      return v as string | undefined;
    };
    const ssh = str("ssh");
    if (!ssh) throw new Error(`Invalid config key "hosts.${name}.ssh" in ${file}: required`);
    return toTarget(name, { ssh, paneflow: str("paneflow") ?? "paneflow", socket: str("socket") });
  });
}

/** JSONC as JSON: comments and trailing commas removed, strings left alone. */
export function plainJson(text: string): string {
  let out = "";
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
      out += "\n";
    } else if (c === "/" && text[i + 1] === "*") {
      const end = text.indexOf("*/", i + 2);
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, "$1");
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
