/**
 * Flow control between the PTY and the terminal: a flood loses no line, and
 * a program that exits right after a burst still shows its last line.
 */
import assert from "node:assert/strict";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";

interface ReadResult {
  text: string;
  lines: number;
  total_lines: number;
  eof: boolean;
}

/** The newest `count` lines, read in slices of at most 4000 (the read cap), oldest first. */
async function lastLines(host: TestHost, id: number, count: number): Promise<string[]> {
  const out: string[][] = [];
  for (let offset = 0; offset < count; offset += 4000) {
    const r = await host.call("surface.read", {
      surface_id: id,
      lines: Math.min(4000, count - offset),
      offset,
      fenced: false,
    });
    out.unshift(r.text.split("\n"));
  }
  return out.flat();
}

/** Asserts `lines` are consecutive integers ending at `last`. */
function assertContiguous(lines: string[], last: number) {
  const first = last - lines.length + 1;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i] !== String(first + i)) {
      assert.fail(
        `line ${i} is ${JSON.stringify(lines[i])}, expected ${first + i} (lines ${first}..${last})`,
      );
    }
  }
}

async function exitedPane(host: TestHost, id: number, timeoutMs: number) {
  return await waitUntil(`pane ${id} to exit`, async () => {
    const { surfaces } = await host.call(
      "surface.list",
    );
    const p = surfaces.find((s) => s.surface_id === id);
    return p?.exited && p;
  }, { timeoutMs, intervalMs: 50 });
}

Deno.test("flow control: a pane writing 3,000,000 lines loses none of the last 10,000", async () => {
  await withHost({}, async (host) => {
    const ws = await host.json<{ surface_id: number }>(["new", "-c", "seq 1 3000000; echo END"]);
    const id = ws.surface_id;
    // The host must keep answering while the flood is parsed.
    const pingStart = Date.now();
    assert.equal((await host.call("system.ping")).pong, true);
    assert.ok(Date.now() - pingStart < 1000, "ping answered during the flood");

    const p = await exitedPane(host, id, 60_000);
    assert.equal(p.exit_code, 0);
    const lines = await lastLines(host, id, 10_000);
    assert.equal(lines.length, 10_000);
    assert.equal(lines.at(-1), "END");
    assertContiguous(lines.slice(0, -1), 3_000_000);

    const status = await host.call("surface.list");
    assert.ok(status.surfaces[0].output_generation > 0);
  });
});

Deno.test("flow control: eight floods at once on one worker each finish with every line of their tail", async () => {
  // More floods than one turn's budget can parse: they are resumed a few per turn, in order; none
  // may be left paused, none may lose a line, and a quiet pane's output is not held behind them.
  await withHost({ config: `{ "host": { "pane_workers": 1 } }` }, async (host) => {
    const ids: number[] = [];
    for (let i = 0; i < 8; i++) {
      ids.push(
        (await host.json<{ surface_id: number }>(["new", "-c", `seq 1 100000; echo END${i}`])).surface_id,
      );
    }
    const quiet =
      (await host.json<{ surface_id: number }>(["new", "-c", "read x; echo got-$x; exec sleep 60"]))
        .surface_id;
    await host.call("surface.send_text", { surface_id: quiet, text: "ping\n" });
    await waitUntil("the quiet pane's answer during the floods", async () => {
      const r = await host.call("surface.read", { surface_id: quiet, fenced: false });
      return r.text.includes("got-ping");
    }, { timeoutMs: 30_000 });
    for (const [i, id] of ids.entries()) {
      const p = await exitedPane(host, id, 120_000);
      assert.equal(p.exit_code, 0);
      const lines = await lastLines(host, id, 2000);
      assert.equal(lines.at(-1), `END${i}`);
      assertContiguous(lines.slice(0, -1), 100_000);
    }
  });
});

Deno.test("flow control: a pane that exits right after a burst shows its last line", async () => {
  await withHost({}, async (host) => {
    // Several at once, on both workers: each program is the pane command itself and exits at once.
    const ids: number[] = [];
    ids.push((await host.json<{ surface_id: number }>(["new", "-c", "seq 1 200000"])).surface_id);
    for (let i = 0; i < 3; i++) {
      ids.push((await host.json<{ surface_id: number }>(["split", "v", "-c", "seq 1 200000"])).surface_id);
    }
    for (const id of ids) {
      const p = await exitedPane(host, id, 30_000);
      assert.equal(p.exit_code, 0);
      const lines = await lastLines(host, id, 4000);
      assert.equal(lines.length, 4000, `pane ${id}`);
      assert.equal(lines.at(-1), "200000", `pane ${id} shows the last line`);
      assertContiguous(lines, 200_000);
    }
    // The CLI sees the same final screen.
    const r = await host.cli(["read", String(ids[0]), "--raw", "--lines", "3"]);
    assert.equal(r.stdout, "199998\n199999\n200000\n");
  });
});

Deno.test("flow control: a pane printing binary garbage stays readable and does not flood the host's log", async () => {
  await withHost({}, async (host) => {
    const ws = await host.json<{ surface_id: number }>([
      "new",
      "-c",
      // Random bytes contain terminal queries (DA, DSR); the emulator answers them on the pane's input
      // as a real terminal does. With echo on, the tty would echo a late answer after DONE-MARK.
      "stty -echo; head -c 1000000 /dev/urandom; printf '\\033c'; echo DONE-MARK",
    ]);
    const p = await exitedPane(host, ws.surface_id, 30_000);
    assert.equal(p.exit_code, 0);
    const r = await host.cli(["read", String(ws.surface_id), "--raw", "--lines", "1"]);
    assert.equal(r.stdout, "DONE-MARK\n");
    const s = await host.json<{ count: number }>(["search", String(ws.surface_id), "done-mark"]);
    assert.equal(s.count, 1);
    assert.ok(host.log().length < 10_000, `host log is ${host.log().length} bytes after 1 MB of binary`);
  });
});
