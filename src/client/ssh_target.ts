/**
 * Reaching a host on another machine: `ssh <dest> <paneflow> relay`, with the
 * user's own `ssh` (their config, agent, known_hosts and ProxyJump apply) and
 * OpenSSH's ControlMaster so a `read` in a loop pays one handshake, not one per
 * call. No dependencies: the CLI path imports this.
 *
 * @module
 */
import { dirname, type Env, socketPath } from "../paths.ts";

/** A remote host, as named on the command line or in the config's `hosts`. */
export interface RemoteTarget {
  /** What the user called it: a config name, or the ssh:// URL as given. */
  label: string;
  /** `[user@]host` for ssh. */
  destination: string;
  port?: number;
  /** The command that runs paneflow there (a shell command line; default `paneflow`). */
  paneflow: string;
  /** The host's socket there, when not the default. */
  socket?: string;
}

/** A `--host` value: an `ssh://[user@]host[:port]` URL, or a name for the config's `hosts`. */
export type HostArg =
  | { kind: "url"; target: RemoteTarget }
  | { kind: "name"; name: string };

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Parses `--host` / `PANEFLOW_HOST`; throws one line naming what is wrong. */
export function parseHostArg(value: string): HostArg {
  if (value.startsWith("ssh://")) {
    const m = /^ssh:\/\/(?:([^@/:\s]+)@)?([^@/:\s\[\]]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?\/?$/.exec(value);
    if (!m) throw new Error(`Invalid --host "${value}": expected ssh://[user@]host[:port]`);
    const port = m[3] === undefined ? undefined : Number(m[3]);
    if (port !== undefined && (port < 1 || port > 65535)) {
      throw new Error(`Invalid --host "${value}": port ${port} is out of range`);
    }
    const host = m[2].replace(/^\[|\]$/g, "");
    return {
      kind: "url",
      target: { label: value, destination: m[1] ? `${m[1]}@${host}` : host, port, paneflow: "paneflow" },
    };
  }
  if (!NAME.test(value)) {
    throw new Error(
      `Invalid --host "${value}": give a name from the config's "hosts" or ssh://[user@]host[:port]`,
    );
  }
  return { kind: "name", name: value };
}

/** Quotes one word for a POSIX shell (the remote side runs the command through the user's shell). */
export function shWord(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/** The `ssh` program: `$PANEFLOW_SSH` (a wrapper, say) or `ssh` from PATH. */
export function sshProgram(env: Env = Deno.env): string {
  return env.get("PANEFLOW_SSH") || "ssh";
}

/**
 * Where ControlMaster sockets live: beside this user's local paneflow socket
 * (a 0700 directory), named by ssh's `%C` hash of the connection.
 */
export function controlPath(env: Env = Deno.env): string {
  return `${dirname(socketPath(env))}/ssh-%C`;
}

/** The remote command line: `<paneflow> relay [--socket <path>]`. */
export function relayCommand(t: RemoteTarget, extra: string[] = []): string {
  const args = ["relay", ...(t.socket ? ["--socket", t.socket] : []), ...extra];
  return `${t.paneflow} ${args.map(shWord).join(" ")}`;
}

/** The argv of `ssh` that runs `remote` on `t`, reusing a ControlMaster connection. */
export function sshArgv(t: RemoteTarget, remote: string, env: Env = Deno.env): string[] {
  return [
    sshProgram(env),
    "-o",
    "ControlMaster=auto",
    "-o",
    `ControlPath=${controlPath(env)}`,
    "-o",
    // The master outlives the verb by a few minutes, so the next verb skips the handshake.
    "ControlPersist=300",
    "-o",
    "ServerAliveInterval=15",
    "-o",
    "ServerAliveCountMax=2",
    ...(t.port ? ["-p", String(t.port)] : []),
    "-T",
    "--",
    t.destination,
    remote,
  ];
}

/**
 * One line that says what went wrong reaching `t`, from ssh's exit code and
 * stderr, with what to do; null when it is not a connection problem.
 */
export function explainSshFailure(t: RemoteTarget, code: number, stderr: string): string | null {
  const at = `host "${t.label}"`;
  const said = stderr.trim().split("\n").filter(Boolean).at(-1) ?? "";
  if (
    /Host key verification failed|REMOTE HOST IDENTIFICATION HAS CHANGED|No .* host key is known/i.test(
      stderr,
    )
  ) {
    return `Cannot reach ${at}: its host key is unknown or changed; run \`ssh ${t.destination}\` once to check and accept it`;
  }
  if (/Permission denied|Too many authentication failures/i.test(stderr)) {
    return `Cannot reach ${at}: ssh authentication was refused; check \`ssh ${t.destination}\` works (keys, agent)`;
  }
  if (/Could not resolve hostname|Name or service not known|nodename nor servname/i.test(stderr)) {
    return `Cannot reach ${at}: ssh cannot resolve ${t.destination}`;
  }
  if (
    /Connection refused|Connection timed out|No route to host|Network is unreachable|Connection closed by|Connection reset|timed out/i
      .test(stderr)
  ) {
    return `Cannot reach ${at}: ${said || "the connection failed"}`;
  }
  // Before "not installed": the relay's own message may quote "No such file or directory" (no socket).
  if (/No paneflow host answers/.test(stderr)) {
    return `${said.replace(/^paneflow: /, "")} (${at})`;
  }
  if (code === 127 || /command not found|No such file or directory/i.test(stderr)) {
    return `paneflow is not installed on ${at} (\`${t.paneflow}\` not found there); install it or set hosts.<name>.paneflow`;
  }
  if (/unknown verb "relay"/.test(stderr)) {
    return `paneflow on ${at} is too old to relay (no \`relay\` verb); upgrade it there`;
  }
  if (code === 255) return `Cannot reach ${at}: ${said || `ssh exited ${code}`}`;
  return null;
}
