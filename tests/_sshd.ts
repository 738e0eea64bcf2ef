/**
 * A real OpenSSH server for remote tests: started on a free 127.0.0.1 port
 * with a throwaway host key and user key, `StrictModes no`, and no system
 * config touched. The client side is an `ssh` wrapper script that adds `-F`
 * with a config naming the server, so paneflow runs the user's real `ssh`
 * exactly as it would against any machine.
 *
 * @module
 */

/** Why remote tests cannot run here, or null when sshd and ssh are installed. */
export function sshdMissing(): string | null {
  for (const bin of ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen"]) {
    try {
      Deno.statSync(bin);
    } catch {
      return `${bin} is not installed (apt-get install openssh-server openssh-client)`;
    }
  }
  return null;
}

/** A running sshd and the files a client needs to reach it. */
export interface Sshd {
  /** The `Host` alias the client config defines. */
  alias: string;
  port: number;
  dir: string;
  /** An `ssh` executable (a wrapper adding `-F <config>`); set it as `PANEFLOW_SSH`. */
  ssh: string;
  /** Stops the server (the test may do it mid-way); idempotent. */
  stop(): Promise<void>;
  /** Starts it again on the same port. */
  start(): Promise<void>;
  /** sshd's log so far. */
  log(): string;
  /** Kills every session process of this sshd, as a dropped network would end them. */
  dropConnections(): Promise<void>;
}

async function run(cmd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command(cmd, { args, stdout: "null", stderr: "piped" }).output();
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (l.addr as Deno.NetAddr).port;
  l.close();
  return port;
}

/** Starts sshd on a free port; the caller must `stop()` it. */
export async function startSshd(): Promise<Sshd> {
  const dir = await Deno.makeTempDir({ prefix: "pf-sshd-" });
  const port = freePort();
  const user = Deno.env.get("USER") ??
    (await new Deno.Command("id", { args: ["-un"] }).output().then((o) =>
      new TextDecoder().decode(o.stdout).trim()
    ));
  await run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", `${dir}/host_key`]);
  await run("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", `${dir}/id`]);
  await Deno.copyFile(`${dir}/id.pub`, `${dir}/authorized_keys`);
  const hostPub = (await Deno.readTextFile(`${dir}/host_key.pub`)).trim().split(" ").slice(0, 2).join(" ");
  await Deno.writeTextFile(`${dir}/known_hosts`, `[127.0.0.1]:${port} ${hostPub}\n`);
  await Deno.writeTextFile(
    `${dir}/sshd_config`,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${dir}/host_key`,
      `AuthorizedKeysFile ${dir}/authorized_keys`,
      `PidFile ${dir}/sshd.pid`,
      "StrictModes no",
      "UsePAM no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PubkeyAuthentication yes",
      "PermitRootLogin prohibit-password",
      "PrintMotd no",
      "AcceptEnv PANEFLOW_*",
      "MaxSessions 50",
      "MaxStartups 50",
      "",
    ].join("\n"),
  );
  const alias = "pf-remote-test";
  await Deno.writeTextFile(
    `${dir}/ssh_config`,
    [
      `Host ${alias}`,
      "  HostName 127.0.0.1",
      `  Port ${port}`,
      `  User ${user}`,
      `  IdentityFile ${dir}/id`,
      "  IdentitiesOnly yes",
      `  UserKnownHostsFile ${dir}/known_hosts`,
      "  StrictHostKeyChecking yes",
      "  BatchMode yes",
      "  LogLevel ERROR",
      // Keep the wrapper's connections out of the user's own ControlMaster sockets.
      `  ControlPath ${dir}/cm-%C`,
      "",
    ].join("\n"),
  );
  const ssh = `${dir}/ssh`;
  await Deno.writeTextFile(ssh, `#!/bin/sh\nexec /usr/bin/ssh -F ${dir}/ssh_config "$@"\n`);
  await Deno.chmod(ssh, 0o755);
  await Deno.mkdir("/run/sshd", { recursive: true }).catch(() => {});

  let child: Deno.ChildProcess | null = null;
  let text = "";
  const start = async () => {
    child = new Deno.Command("/usr/sbin/sshd", {
      args: ["-D", "-e", "-f", `${dir}/sshd_config`],
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const dec = new TextDecoder();
    (async () => {
      for await (const c of child!.stderr) text += dec.decode(c, { stream: true });
    })();
    child.stdout.cancel().catch(() => {});
    const deadline = Date.now() + 10_000;
    while (true) {
      try {
        const c = await Deno.connect({ hostname: "127.0.0.1", port });
        c.close();
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`sshd did not listen on ${port}: ${text}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const stop = async () => {
    const c = child;
    child = null;
    if (!c) return;
    try {
      c.kill("SIGTERM");
    } catch { /* gone */ }
    await c.status;
  };
  // deno-lint-ignore require-await
  const dropConnections = async () => {
    const daemon = (child as Deno.ChildProcess | null)?.pid;
    if (!daemon) return;
    for (const e of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(e.name)) continue;
      try {
        const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        if (ppid === daemon) Deno.kill(Number(e.name), "SIGKILL");
      } catch { /* gone */ }
    }
  };
  await start();
  return {
    dropConnections,
    alias,
    port,
    dir,
    ssh,
    start,
    log: () => text,
    async stop() {
      await stop();
    },
  };
}

/** Stops sshd and removes its files, including the client's ControlMaster sockets. */
export async function disposeSshd(s: Sshd): Promise<void> {
  await s.stop();
  // A ControlMaster left by a test: ask it to exit before removing its socket.
  for await (const e of Deno.readDir(s.dir)) {
    if (e.name.startsWith("cm-")) {
      await new Deno.Command("/usr/bin/ssh", {
        args: ["-F", `${s.dir}/ssh_config`, "-O", "exit", s.alias],
        stdout: "null",
        stderr: "null",
      }).output().catch(() => {});
    }
  }
  await Deno.remove(s.dir, { recursive: true }).catch(() => {});
}
