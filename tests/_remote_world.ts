/**
 * The world the remote tests run in: a real loopback sshd (./_sshd.ts), a
 * "remote" host (this checkout serving its own socket, reached through real
 * `ssh`), a local host, and a config naming `box` (up) and `down` (nothing
 * listens), plus whatever hosts a test adds.
 *
 * @module
 */
import { ROOT, runCli, type RunResult, startHost, type TestHost } from "./_harness.ts";
import { disposeSshd, type Sshd, startSshd } from "./_sshd.ts";

/** The command that runs this checkout's paneflow on the "remote" machine. */
export const REMOTE_PANEFLOW = `${Deno.execPath()} run -A --quiet --config=${ROOT}deno.json ${ROOT}main.ts`;

/** What a remote test gets. */
export interface World {
  sshd: Sshd;
  remote: TestHost;
  local: TestHost;
  /** Runs the local CLI with the config naming `box` (up) and `down` (nothing listens). */
  cli(args: string[], stdin?: string): Promise<RunResult>;
  env: Record<string, string>;
}

/** Runs `fn` in a fresh world; prints the logs when it fails and always tears it down. */
export async function withWorld(
  fn: (w: World) => Promise<void>,
  opts: {
    remoteScripting?: boolean;
    /** More `hosts` entries for the config. */
    moreHosts?: (remote: TestHost, sshd: Sshd) => Record<string, unknown>;
  } = {},
): Promise<void> {
  const sshd = await startSshd();
  const remote = await startHost({ scripting: opts.remoteScripting ?? true });
  const local = await startHost();
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const deadPort = (closed.addr as Deno.NetAddr).port;
  closed.close();
  const config = `${local.dir}/remote-config.jsonc`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      hosts: {
        box: { ssh: sshd.alias, paneflow: REMOTE_PANEFLOW, socket: remote.socket },
        down: { ssh: `ssh://127.0.0.1:${deadPort}`, paneflow: REMOTE_PANEFLOW },
        ...opts.moreHosts?.(remote, sshd),
      },
    }),
  );
  const env = { ...local.env, PANEFLOW_CONFIG: config, PANEFLOW_SSH: sshd.ssh };
  try {
    await fn({ sshd, remote, local, env, cli: (args, stdin) => runCli(args, env, stdin) });
  } catch (e) {
    console.error(
      `--- sshd log ---\n${sshd.log()}\n--- remote host log ---\n${remote.log()}\n--- local host log ---\n${local.log()}`,
    );
    throw e;
  } finally {
    await disposeSshd(sshd);
    await remote.stop();
    await local.stop();
  }
}
