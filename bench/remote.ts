/**
 * `deno run -A bench/remote.ts [--runs N]`: what reaching a host over SSH
 * costs, against a real loopback sshd (tests/_sshd.ts), in one run:
 *
 * - a one-shot `paneflow read` through `--host` with a warm ControlMaster,
 *   against the same `read` on the local socket (whole processes, interleaved);
 * - `watch` latency: from a marker printed in a pane to the `surface_changed`
 *   line a watcher prints, remote (over the relay) and local.
 *
 * The remote paneflow is this checkout on its own socket, so the figures are
 * the transport's cost, not a network's.
 *
 * @module
 */
import { ROOT, runCli, startHost } from "../tests/_harness.ts";
import { disposeSshd, sshdMissing, startSshd } from "../tests/_sshd.ts";
import { percentile, spawnCli } from "../tests/_stream.ts";

const runs = Number(Deno.args[Deno.args.indexOf("--runs") + 1]) || 20;
const missing = sshdMissing();
if (missing) {
  console.error(`bench/remote.ts: ${missing}`);
  Deno.exit(1);
}

const sshd = await startSshd();
const host = await startHost();
try {
  const config = `${host.dir}/remote.jsonc`;
  await Deno.writeTextFile(
    config,
    JSON.stringify({
      hosts: {
        box: {
          ssh: sshd.alias,
          paneflow: `${Deno.execPath()} run -A --quiet --config=${ROOT}deno.json ${ROOT}main.ts`,
          socket: host.socket,
        },
      },
    }),
  );
  const env = { ...host.env, PANEFLOW_CONFIG: config, PANEFLOW_SSH: sshd.ssh };
  const { surface_id } = await host.call("workspace.create", {
    command: "cat",
    pane_name: "p",
    cwd: host.dir,
  });
  const timed = async (args: string[]) => {
    const t = performance.now();
    const r = await runCli(args, env);
    if (r.code !== 0) throw new Error(`paneflow ${args.join(" ")}: ${r.stderr}`);
    return performance.now() - t;
  };
  await timed(["--host", "box", "read", "p"]); // warms the ControlMaster
  // The floor: a bare command over the same warm ControlMaster (the remote login shell's start-up
  // is in it, and in every remote verb).
  const sshTrue = async () => {
    const t = performance.now();
    const cp = `ControlPath=${host.dir}/ssh-%C`;
    await new Deno.Command(sshd.ssh, { args: ["-o", "ControlMaster=auto", "-o", cp, sshd.alias, "true"] })
      .output();
    return performance.now() - t;
  };
  const local: number[] = [];
  const remote: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < runs; i++) {
    local.push(await timed(["read", "p"]));
    remote.push(await timed(["--host", "box", "read", "p"]));
    floor.push(await sshTrue());
  }
  const med = (xs: number[]) => percentile(xs, 50);

  // watch latency: marker typed into the pane → the watcher's line.
  const watchLatency = async (args: string[]) => {
    const watcher = spawnCli(["watch", "--surface", String(surface_id), ...args], env);
    const lineAfter = async (n: number, what: string) => {
      const deadline = Date.now() + 30_000;
      while (watcher.lines.length <= n) {
        if (Date.now() > deadline || watcher.done()) throw new Error(`no ${what}: ${watcher.stderr()}`);
        await new Promise((r) => setTimeout(r, 1));
      }
      return watcher.times[n];
    };
    const lags: number[] = [];
    try {
      // Until the watcher is subscribed, a marker is not seen: type until one is.
      for (let i = 0; watcher.lines.length === 0 && i < 300; i++) {
        await host.call("surface.send_text", { surface_id, text: "w\r" });
        await new Promise((r) => setTimeout(r, 100));
      }
      for (let i = 0; i < runs; i++) {
        await new Promise((r) => setTimeout(r, 50)); // let the previous change's frames drain
        const before = watcher.lines.length;
        const t = performance.now();
        await host.call("surface.send_text", { surface_id, text: `m${i}\r` });
        lags.push((await lineAfter(before, `event ${i}`)) - t);
      }
    } finally {
      watcher.kill();
      await watcher.status;
    }
    return lags;
  };
  const wl = await watchLatency([]);
  const wr = await watchLatency(["--host", "box"]);
  console.log(`one-shot read, ${runs} runs interleaved (median):`);
  console.log(`  local  ${med(local).toFixed(0)} ms`);
  console.log(
    `  remote ${med(remote).toFixed(0)} ms (warm ControlMaster)  ratio ${
      (med(remote) / med(local)).toFixed(2)
    }x`,
  );
  console.log(
    `  ssh <host> true ${med(floor).toFixed(0)} ms (the floor: session set-up and the remote shell)`,
  );
  console.log(`  remote - floor ${(med(remote) - med(floor)).toFixed(0)} ms`);
  console.log(`watch latency, marker → watcher line (p50 / p99):`);
  console.log(`  local  ${percentile(wl, 50).toFixed(1)} / ${percentile(wl, 99).toFixed(1)} ms`);
  console.log(`  remote ${percentile(wr, 50).toFixed(1)} / ${percentile(wr, 99).toFixed(1)} ms`);
} finally {
  await disposeSshd(sshd);
  await host.stop();
}
