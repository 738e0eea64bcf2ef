/**
 * The SSH transport: a {@link Duplex} carried by `ssh <host> paneflow relay`,
 * so every verb runs against a host on another machine exactly as locally.
 * ssh is the user's own (config, agent, known_hosts, ProxyJump); connections
 * are reused through OpenSSH's ControlMaster (see ./ssh_target.ts). When ssh
 * or the relay fails, the client's "closed the connection" error becomes one
 * line naming the host and what to do.
 *
 * @module
 */
import { CliFailure } from "../errors.ts";
import { dirname, socketPath } from "../paths.ts";
import { resolveHost } from "./named_hosts.ts";
import { explainSshFailure, relayCommand, type RemoteTarget, sshArgv } from "./ssh_target.ts";
import type { Duplex } from "../wire/duplex.ts";
import { later, sleep } from "./timer.ts";

/** A duplex over an ssh child's stdio; `failure` explains an abnormal end once stdout has closed. */
export interface SshDuplex extends Duplex {
  failure: string | null;
  target: RemoteTarget;
}

/** How long ssh may take to say why it ended after its stdout closed. */
const EXIT_GRACE_MS = 3000;

/** Spawns `ssh … <paneflow> relay` to `target` and returns its stdio as a duplex. */
export async function sshDuplex(target: RemoteTarget, opts: { start?: boolean } = {}): Promise<SshDuplex> {
  // ControlMaster sockets go beside this user's local socket, in a 0700 directory.
  await Deno.mkdir(dirname(socketPath()), { recursive: true, mode: 0o700 }).catch(() => {});
  const [cmd, ...args] = sshArgv(target, relayCommand(target, opts.start ? ["--start"] : []));
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(cmd, { args, stdin: "piped", stdout: "piped", stderr: "piped" }).spawn();
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) {
      throw new CliFailure(
        `Cannot reach host "${target.label}": ssh is not installed (no "${cmd}" on PATH)`,
        undefined,
        { cause: e },
      );
    }
    throw e;
  }
  const reader = child.stdout.getReader({ mode: "byob" });
  const writer = child.stdin.getWriter();
  let stderr = "";
  const stderrDone = (async () => {
    const dec = new TextDecoder();
    for await (const c of child.stderr) if (stderr.length < 16_384) stderr += dec.decode(c, { stream: true });
  })().catch(() => {});
  let closed = false;
  const duplex: SshDuplex = {
    target,
    failure: null,
    async read(p) {
      const { value, done } = await reader.read(new Uint8Array(p.length));
      if (done || !value) {
        // ssh ended: wait briefly for its status and say why.
        const status = await Promise.race([
          child.status,
          sleep(EXIT_GRACE_MS).then(() => null),
        ]);
        await Promise.race([stderrDone, sleep(200)]);
        if (!closed) {
          duplex.failure = explainSshFailure(target, status?.code ?? 255, stderr) ??
            (status && status.code !== 0
              ? `Lost host "${target.label}": ssh exited ${status.code}${
                stderr ? `: ${stderr.trim().split("\n").at(-1)}` : ""
              }`
              : `Lost host "${target.label}": the connection closed`);
        }
        return null;
      }
      p.set(value);
      return value.length;
    },
    async write(p) {
      await writer.write(p.slice());
      return p.length;
    },
    close() {
      if (closed) return;
      closed = true;
      writer.close().catch(() => {});
      reader.cancel().catch(() => {});
      // The relay ends when its stdin does; a hung ssh is not waited for.
      later(2000, () => {
        try {
          child.kill("SIGTERM");
        } catch { /* exited */ }
      });
      child.status.catch(() => {});
    },
  };
  child.status.then(() => {}, () => {});
  return duplex;
}

/** The duplex to the remote host a `--host` value names (config name or ssh:// URL). */
export async function remoteDuplex(value: string, opts: { start?: boolean } = {}): Promise<SshDuplex> {
  let target: RemoteTarget;
  try {
    target = await resolveHost(value);
  } catch (e) {
    throw new CliFailure((e as Error).message, 2, { cause: e });
  }
  return await sshDuplex(target, opts);
}
