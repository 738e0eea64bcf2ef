/**
 * No orphans (docs/security.md). Panes run a program that ignores SIGHUP, a
 * `setsid` child, a `nohup` job, an interactive bash's background job and
 * plain `sleep`s. After SIGKILL of the host all are gone within 2 s (the
 * watchdog); on a clean stop too (SIGHUP, SIGKILL after
 * terminal.kill_grace_ms); closing a pane escalates the same way; and when
 * the watchdog died with the host, the next `serve` ends the leftovers and
 * says so.
 */
import assert from "node:assert/strict";
import { readPane, spawnServe, type TestHost, waitUntil, withHost } from "./_harness.ts";

/** Distinct `sleep` arguments: the processes are found by them in /proc. */
function markers(n: number): number[] {
  const base = 700_000 + Math.floor(Math.random() * 200_000) * 10;
  return Array.from({ length: n }, (_, i) => base + i);
}

/** The pids of running (not zombie) processes whose argv is `sleep <marker>`. */
function running(marks: number[]): Map<number, number> {
  const found = new Map<number, number>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const argv = Deno.readTextFileSync(`/proc/${e.name}/cmdline`).split("\0");
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      if (/\) [ZX] /.test(stat)) continue;
      const m = marks.find((k) => argv[0].endsWith("sleep") && argv[1] === String(k));
      if (m !== undefined) found.set(m, Number(e.name));
    } catch { /* gone */ }
  }
  return found;
}

/** Opens the panes of every case; resolves once each marker process runs. */
async function openPanes(host: TestHost, marks: number[]): Promise<void> {
  const [hup, setsid, nohup, job, ...plain] = marks;
  const commands = [
    `trap '' HUP; exec sleep ${hup}`,
    `setsid sleep ${setsid} & exec sleep 600`,
    `nohup sleep ${nohup} >/dev/null 2>&1 & exec sleep 600`,
    ...plain.map((m) => `exec sleep ${m}`),
  ];
  for (const command of commands) await host.call("workspace.create", { command });
  await host.call("workspace.create", {
    command: "exec bash --norc --noprofile -i",
    pane_name: "bash",
    env: { PS1: "BASH-READY> " },
  });
  await waitUntil(
    "the interactive bash prompt",
    async () => (await readPane(host, "bash")).includes("BASH-READY>"),
  );
  await host.call("surface.send_text", { surface_id: commands.length + 1, text: `sleep ${job} &\r` });
  await waitUntil("every marked process to run", () => {
    const r = running(marks);
    return r.size === marks.length || false;
  }, { timeoutMs: 15_000 });
}

async function goneWithin(marks: number[], ms: number, what: string): Promise<number> {
  const t0 = performance.now();
  await waitUntil(what, () => {
    const left = running(marks);
    return left.size === 0 || false;
  }, { timeoutMs: ms, intervalMs: 10 }).catch((e) => {
    const left = running(marks);
    for (const pid of left.values()) Deno.kill(pid, "SIGKILL");
    throw new Error(`${e.message}; still running: ${JSON.stringify([...left])}`);
  });
  return performance.now() - t0;
}

const linux = Deno.build.os === "linux";

Deno.test({
  name: "orphans: after SIGKILL of the host every pane process is gone within 2 s",
  ignore: !linux,
  fn: async () => {
    await withHost({ config: JSON.stringify({ host: { pane_workers: 2 } }) }, async (host) => {
      const marks = markers(7);
      await openPanes(host, marks);
      const { pid } = await host.call("system.identify");
      Deno.kill(pid, "SIGKILL");
      const ms = await goneWithin(marks, 2000, "every pane process to end after the host's SIGKILL");
      console.log(`all ${marks.length} gone ${ms.toFixed(0)} ms after SIGKILL`);
    });
  },
});

/** Whether `pid` is a live process (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    return !/\) [ZX] /.test(Deno.readTextFileSync(`/proc/${pid}/stat`));
  } catch {
    return false;
  }
}

Deno.test({
  name: "orphans: a clean stop sends SIGHUP, then SIGKILL after terminal.kill_grace_ms",
  ignore: !linux,
  fn: async () => {
    const grace = 1000;
    const dir = await Deno.makeTempDir({ prefix: "pf-hup-" });
    try {
      await withHost({ config: JSON.stringify({ terminal: { kill_grace_ms: grace } }) }, async (host) => {
        const marks = markers(6);
        await openPanes(host, marks);
        // A program that writes down each SIGHUP (the time, in ms) and goes on: only SIGKILL ends it.
        // `wait` returns as soon as a trapped signal arrives, so the time is when it came.
        await host.call("workspace.create", {
          command: `echo $$ > ${dir}/pid; trap 'echo $(($(date +%s%N) / 1000000)) >> ${dir}/hup' HUP; ` +
            `while :; do sleep 30 & wait $!; done`,
        });
        const recorder = await waitUntil("the HUP recorder to start", async () => {
          const text = await Deno.readTextFile(`${dir}/pid`).catch(() => "");
          return Number(text.trim()) || false;
        });
        const { pid } = await host.call("system.identify");
        Deno.kill(pid, "SIGTERM");
        const ms = await goneWithin(marks, grace + 2000, "every pane process to end after a clean stop");
        const diedAt = await waitUntil(
          "the HUP recorder to be killed",
          () => !alive(recorder) && Date.now(),
          {
            timeoutMs: grace + 2000,
            intervalMs: 5,
          },
        );
        const hups = (await Deno.readTextFile(`${dir}/hup`).catch(() => "")).trim().split("\n").filter(
          Boolean,
        );
        assert.ok(hups.length >= 1, "the recorder got SIGHUP before it was killed");
        const lived = diedAt - Number(hups[0]);
        // It ignored the SIGHUP; the SIGKILL came only once the grace had passed (less the time to notice).
        assert.ok(lived >= grace - 100, `killed ${lived} ms after SIGHUP; the grace is ${grace} ms`);
        console.log(
          `all gone ${
            ms.toFixed(0)
          } ms after SIGTERM; the HUP-ignoring recorder ${lived} ms after its SIGHUP`,
        );
      });
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "orphans: closing a pane escalates to SIGKILL after kill_grace_ms, setsid and nohup children included",
  ignore: !linux,
  fn: async () => {
    await withHost({ config: JSON.stringify({ terminal: { kill_grace_ms: 600 } }) }, async (host) => {
      const [hup, setsid, nohup] = markers(3);
      const { surface_id } = await host.call("workspace.create", {
        command:
          `setsid sleep ${setsid} & nohup sleep ${nohup} >/dev/null 2>&1 & trap '' HUP; exec sleep ${hup}`,
      });
      await host.call("workspace.create", { command: "exec sleep 600", pane_name: "other" });
      await waitUntil("the pane's processes", () => running([hup, setsid, nohup]).size === 3 || false);
      const t0 = performance.now();
      await host.call("surface.close", { surface_id });
      // SIGHUP first: the one ignoring it still runs right after the close.
      assert.ok(running([hup]).size === 1, "SIGKILL came before kill_grace_ms");
      await goneWithin([hup, setsid, nohup], 600 + 2000, "the closed pane's processes to end");
      const ms = performance.now() - t0;
      assert.ok(ms >= 550, `ended after ${ms} ms, before the grace`);
      // Another pane's program is untouched.
      assert.equal((await host.call("surface.list")).surfaces.length, 1);
    });
  },
});

Deno.test({
  name: "orphans: when host and watchdog are both killed, the next serve ends the leftovers and reports them",
  ignore: !linux,
  fn: async () => {
    await withHost({}, async (host) => {
      const [hup, setsid] = markers(2);
      await host.call("workspace.create", {
        command: `setsid sleep ${setsid} & trap '' HUP; exec sleep ${hup}`,
      });
      await waitUntil("the pane's processes", () => running([hup, setsid]).size === 2 || false);
      const { pid } = await host.call("system.identify");
      const watchdog = [...Deno.readDirSync("/proc")].map((e) => e.name).filter((n) => /^\d+$/.test(n)).find(
        (n) => {
          try {
            const stat = Deno.readTextFileSync(`/proc/${n}/stat`);
            return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid &&
              Deno.readTextFileSync(`/proc/${n}/cmdline`).includes("paneflow-watchdog");
          } catch {
            return false;
          }
        },
      );
      assert.ok(watchdog, "the host has a watchdog");
      Deno.kill(Number(watchdog), "SIGKILL");
      Deno.kill(pid, "SIGKILL");
      assert.equal(running([hup, setsid]).size, 2, "they outlived both");
      const next = spawnServe(host.env);
      try {
        await waitUntil(
          "the next host's report",
          () => /did not stop cleanly and left 2 process/.test(next.log()),
          { timeoutMs: 15_000 },
        ).catch((e) => {
          throw new Error(`${e.message}; its log: ${next.log()}`);
        });
        assert.match(next.log(), new RegExp(`sleep ${hup}`));
        await goneWithin([hup, setsid], 2000, "the leftovers to end");
      } finally {
        try {
          next.child.kill("SIGTERM");
        } catch { /* it has exited: its log says why */ }
        await next.exited;
      }
    });
  },
});

Deno.test({
  name: "orphans: a closed and reaped pane leaves the host's record and watchdog; the others stay guarded",
  ignore: !linux,
  fn: async () => {
    await withHost({}, async (host) => {
      const [closed, setsid, plain] = markers(3);
      const { surface_id } = await host.call("workspace.create", {
        command: `exec sleep ${closed}`,
      });
      await host.call("workspace.create", { command: `setsid sleep ${setsid} & exec sleep 600` });
      // No PANEFLOW_HOST_ID and deaf to the PTY's hang-up: only the session the watchdog was told of ends it.
      await host.call("workspace.create", { command: `trap '' HUP; exec env -i sleep ${plain}` });
      await waitUntil("the panes' processes", () => running([closed, setsid, plain]).size === 3 || false);
      const recorded = () =>
        (JSON.parse(Deno.readTextFileSync(`${host.socket}.panes.json`)) as { sessions: number[] }).sessions;
      const closedPid = running([closed]).get(closed)!;
      await waitUntil("all three sessions in the record", () => recorded().length === 3 || false);
      assert.ok(recorded().includes(closedPid));
      await host.call("surface.close", { surface_id });
      await waitUntil(
        "the closed pane's session to leave the record",
        () => recorded().length === 2 || false,
      );
      assert.ok(!recorded().includes(closedPid), `still recorded: ${recorded()}`);
      // The watchdog dropped it too, and still ends the other panes' processes when the host dies.
      const { pid } = await host.call("system.identify");
      Deno.kill(pid, "SIGKILL");
      await goneWithin(
        [setsid, plain],
        2000,
        "the remaining panes' processes to end after the host's SIGKILL",
      );
    });
  },
});
