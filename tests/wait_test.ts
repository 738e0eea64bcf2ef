/**
 * `paneflow wait` (docs/cli.md): --pattern (printed as pane + line), --idle on
 * quiet and busy panes, both together, --any / --all, and every exit code:
 * 4 timeout, 2 usage (neither mode, bad regex), 3 no match or ambiguous,
 * 1 when a pane exits or closes first; a marker printed before the wait
 * starts is found.
 */
import assert from "node:assert/strict";
import { readPane, ROOT, runCommand, type TestHost, waitUntil, withHost } from "./_harness.ts";
import { type CliChild, hostConnections, spawnCli } from "./_stream.ts";

async function newPane(host: TestHost, command: string, name: string, cwd = host.dir): Promise<number> {
  const r = await host.call("workspace.create", { command, cwd, pane_name: name });
  return r.surface_id;
}

/** Types a line into a pane (through the RPC: Deno drops a trailing "\r" from CLI arguments). */
function typeLine(host: TestHost, id: number, line: string) {
  return host.call("surface.send_text", { surface_id: id, text: `${line}\r` });
}

function startWait(host: TestHost, args: string[]): CliChild {
  return spawnCli(["wait", ...args], host.env);
}

/**
 * Starts `paneflow wait` processes and returns once each holds its one
 * connection, subscribed to events, so what the test does next happens while
 * they wait rather than before they looked.
 */
async function startWaits(host: TestHost, argsList: string[][]): Promise<CliChild[]> {
  await waitUntil("no other connections", () => hostConnections(host.socket) === 0);
  const children = argsList.map((args) => startWait(host, args));
  try {
    await waitUntil(`${children.length} waits to connect`, async () => {
      const failed = children.find((c) => c.done());
      if (failed) throw new Error(`wait exited early: ${failed.stderr()}`);
      // One connection each, subscribed: the host lists it as a `wait` event stream.
      const { clients } = await host.call(
        "system.clients",
      );
      return clients.filter((c) => c.verb === "wait" && c.stream).length === children.length;
    });
  } catch (e) {
    await reap(children);
    throw e;
  }
  return children;
}

/** Waits for `child` to exit; returns its code, stdout and stderr. */
async function finish(child: CliChild) {
  const code = await child.status;
  return { code, stdout: child.lines.join("\n"), stderr: child.stderr() };
}

/** Stops children still running at the end of a test. */
async function reap(children: CliChild[]) {
  for (const c of children) {
    c.kill();
    await c.status;
  }
}

async function hasExited(host: TestHost, id: number): Promise<boolean> {
  const { surfaces } = await host.call(
    "surface.list",
  );
  return surfaces.find((p) => p.surface_id === id)?.exited === true;
}

async function screenHas(host: TestHost, target: string, needle: string | RegExp) {
  const text = await readPane(host, target);
  return typeof needle === "string" ? text.includes(needle) : needle.test(text);
}

const TICKER = (stop: string, first = "") =>
  `${first}while [ ! -e ${stop} ]; do echo tick; sleep 0.1; done; echo stopped; exec sleep 60`;

Deno.test("wait --pattern: a line printed while waiting is found and printed as pane and line; no false match", async () => {
  await withHost({}, async (host) => {
    const id = await newPane(host, "stty -echo; exec cat", "pp");
    const [w, j] = await startWaits(host, [
      ["--match", "pp", "--pattern", "MARK-7$", "--timeout", "20"],
      ["--match", "pp", "--pattern", "MARK-[7]", "--timeout", "20", "--json"],
    ]);
    try {
      await typeLine(host, id, "MARK-6");
      await typeLine(host, id, "MARK-77");
      await waitUntil("MARK-77 on screen", () => screenHas(host, "pp", "MARK-77"));
      // MARK-6 never matches; MARK-77 matches only the unanchored one.
      const rj = await finish(j);
      assert.equal(rj.code, 0, rj.stderr);
      const out = JSON.parse(rj.stdout);
      assert.deepEqual(out.matched, [{ surface_id: id, name: "pp", line: 2, text: "MARK-77", idle: null }]);
      assert.equal(typeof out.elapsed_ms, "number");
      assert.ok(!w.done(), `the anchored wait matched too early: ${w.lines.join("|")}`);
      await typeLine(host, id, "MARK-7");
      const r = await finish(w);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, `${id} (pp): line 3: MARK-7`);
      assert.equal(r.stderr, "");
    } finally {
      await reap([w, j]);
    }
  });
});

Deno.test("wait --pattern: a marker printed before the wait starts is found at once (no gap)", async () => {
  await withHost({}, async (host) => {
    const id = await newPane(host, "echo; echo EARLY-MARK; exec sleep 60", "early");
    await waitUntil("the marker on screen", () => screenHas(host, "early", "EARLY-MARK"));
    const t = performance.now();
    const r = await host.cli(["wait", "--match", "early", "--pattern", "EARLY-M", "--timeout", "10"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), `${id} (early): line 2: EARLY-MARK`);
    assert.ok(performance.now() - t < 5000);
  });
});

Deno.test("wait --idle: a quiet pane after --settle; a pane printing every 100 ms only once it stops; both modes need both", async () => {
  await withHost({}, async (host) => {
    const quiet = await newPane(host, "echo ready; exec sleep 60", "quiet");
    const busy = await newPane(host, TICKER("STOP1"), "busy");
    const both = await newPane(host, TICKER("STOP2", "echo BOTH-MARK; "), "both");
    const late = await newPane(host, "stty -echo; exec cat", "late");
    await waitUntil("ready on the quiet pane", () => screenHas(host, "quiet", "ready"));

    const waits = await startWaits(host, [
      ["--match", "busy", "--idle", "--settle", "400", "--timeout", "30"],
      ["--match", "both", "--pattern", "BOTH-MARK", "--idle", "--settle", "400", "--timeout", "30"],
      ["--match", "late", "--pattern", "LATE", "--idle", "--settle", "300", "--timeout", "30"],
    ]);
    const [wBusy, wBoth, wLate] = waits;
    try {
      const rq = await host.cli(["wait", "--match", "quiet", "--idle", "--settle", "300", "--json"]);
      assert.equal(rq.code, 0, rq.stderr);
      assert.deepEqual(JSON.parse(rq.stdout).matched, [
        { surface_id: quiet, name: "quiet", line: null, text: null, idle: true },
      ]);

      // Over a second of ticking (three settle times): the busy waits must still be waiting,
      // and so must the one whose idle pane lacks the pattern.
      await waitUntil("12 ticks", async () => (await readPane(host, "busy")).split("tick").length > 12);
      await waitUntil("12 ticks", async () => (await readPane(host, "both")).split("tick").length > 12);
      for (const w of [wBusy, wBoth, wLate]) assert.ok(!w.done(), `returned early: ${w.lines} ${w.stderr()}`);

      const stoppedAt = performance.now();
      await Deno.writeTextFile(`${host.dir}/STOP1`, "");
      await Deno.writeTextFile(`${host.dir}/STOP2`, "");
      const rb = await finish(wBusy);
      assert.equal(rb.code, 0, rb.stderr);
      assert.equal(rb.stdout, `${busy} (busy): idle`);
      assert.ok(await screenHas(host, "busy", "stopped"));
      const quietFor = wBusy.exitedAt()! - stoppedAt;
      assert.ok(quietFor >= 350, `idle reported ${quietFor.toFixed(0)} ms after the ticks stopped`);
      const r2 = await finish(wBoth);
      assert.equal(r2.code, 0, r2.stderr);
      assert.equal(r2.stdout, `${both} (both): line 1: BOTH-MARK`);
      assert.ok(wBoth.exitedAt()! - stoppedAt >= 350);

      assert.ok(!wLate.done());
      const sentAt = performance.now();
      await typeLine(host, late, "LATE");
      const rl = await finish(wLate);
      assert.equal(rl.code, 0, rl.stderr);
      assert.equal(rl.stdout, `${late} (late): line 1: LATE`);
      assert.ok(wLate.exitedAt()! - sentAt >= 250, "the new line restarted the settle time");
    } finally {
      await reap(waits);
    }
  });
});

Deno.test("wait --any / --all over several panes; several without either is exit 3", async () => {
  await withHost({}, async (host) => {
    const dir = `${host.dir}/multi`;
    await Deno.mkdir(dir);
    const ids: number[] = [];
    for (const n of [1, 2, 3]) ids.push(await newPane(host, "stty -echo; exec cat", `m${n}`, dir));
    const sel = `cwd:${dir}`;
    await waitUntil("the panes to run in the dir", async () => {
      const { surfaces } = await host.call("surface.list");
      return surfaces.filter((p) => p.cwd === dir).length === 3;
    });

    const amb = await host.cli(["wait", "--match", sel, "--pattern", "DONE"]);
    assert.equal(amb.code, 3, amb.stderr);
    assert.match(amb.stderr, /matches 3 panes/);
    assert.match(amb.stderr, /--any or --all/);
    assert.equal(amb.stdout, "");

    const [any, all] = await startWaits(host, [
      ["--match", sel, "--pattern", "DONE-[0-9]", "--any", "--json", "--timeout", "20"],
      ["--match", sel, "--pattern", "DONE-[0-9]", "--all", "--json", "--timeout", "20"],
    ]);
    try {
      await typeLine(host, ids[1], "DONE-2");
      const ra = await finish(any);
      assert.equal(ra.code, 0, ra.stderr);
      assert.deepEqual(JSON.parse(ra.stdout).matched, [
        { surface_id: ids[1], name: "m2", line: 1, text: "DONE-2", idle: null },
      ]);

      await typeLine(host, ids[0], "DONE-1");
      await waitUntil("DONE-1 on screen", () => screenHas(host, "m1", "DONE-1"));
      assert.ok(!all.done(), "--all returned with one pane still missing");
      await typeLine(host, ids[2], "DONE-3");
      const rall = await finish(all);
      assert.equal(rall.code, 0, rall.stderr);
      const matched = JSON.parse(rall.stdout).matched as { surface_id: number; text: string }[];
      assert.deepEqual(matched.map((m) => [m.surface_id, m.text]), [
        [ids[0], "DONE-1"],
        [ids[1], "DONE-2"],
        [ids[2], "DONE-3"],
      ]);
    } finally {
      await reap([any, all]);
    }
  });
});

Deno.test("wait: usage errors exit 2, no pane exits 3, a timeout exits 4", async () => {
  await withHost({}, async (host) => {
    await newPane(host, "exec sleep 60", "q");
    const cases: [string[], number, RegExp][] = [
      [["--match", "q"], 2, /--pattern <regex>, --idle, or both/],
      [["--pattern", "x"], 2, /--match/],
      [["--match", "q", "--pattern", "(unclosed"], 2, /Invalid --pattern/],
      [["--match", "q", "--idle", "--any", "--all"], 2, /--any and --all/],
      [["--match", "q", "--idle", "--timeout", "0"], 2, /--timeout/],
      [["--match", "q", "--idle", "--settle", "-5"], 2, /--settle must be zero or more/],
      [["--match", "nosuch", "--pattern", "x"], 3, /No pane matches "nosuch"/],
      [["--match", "99", "--idle"], 3, /99/],
    ];
    for (const [args, code, err] of cases) {
      const r = await host.cli(["wait", ...args]);
      assert.equal(r.code, code, `wait ${args.join(" ")}: ${r.stderr}`);
      assert.match(r.stderr, err, `wait ${args.join(" ")}`);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.equal(r.stdout, "");
    }

    const t = performance.now();
    const r = await host.cli(["wait", "--match", "q", "--pattern", "NEVER", "--timeout", "0.5"]);
    const took = performance.now() - t;
    assert.equal(r.code, 4, r.stderr);
    assert.match(r.stderr, /Timed out after 0\.5s waiting for pattern \/NEVER\/ on q/);
    assert.equal(r.stdout, "");
    assert.ok(took >= 500 && took < 5000, `took ${took.toFixed(0)} ms`);
    // On a pipe (above) a wait prints nothing until it ends; on a terminal it shows progress.
    const cli = [Deno.execPath(), "run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`];
    const wait = [...cli, "wait", "--match", "q", "--pattern", "NEVER", "--timeout", "1.5"].map((w) =>
      `'${w}'`
    );
    const tty = await runCommand("script", ["-qec", wait.join(" "), "/dev/null"], { env: host.env });
    assert.match(tty.stdout, /waiting for pattern \/NEVER\/ on q … 1s/);
    assert.ok(
      tty.stdout.includes("\r\x1b[Kpaneflow: Timed out after 1.5s"),
      "the status line is cleared first",
    );
  });
});

Deno.test("wait: a pane that exits or closes while waited on is exit 1 with the reason; a marker then exit is a match; --any outlives one exit", async () => {
  await withHost({}, async (host) => {
    const ex = await newPane(host, "stty -echo; read x; exit 5", "ex");
    const cl = await newPane(host, "exec sleep 60", "cl");
    const ok = await newPane(host, "stty -echo; read x; echo FOUND-$x; exit 0", "ok");
    const gone = await newPane(host, "exit 7", "gone");
    const waits = await startWaits(host, [
      ["--match", "ex", "--pattern", "NEVER", "--timeout", "20"],
      ["--match", "cl", "--idle", "--settle", "60000", "--timeout", "20"],
      ["--match", "ok", "--pattern", "FOUND-it", "--timeout", "20"],
    ]);
    try {
      await typeLine(host, ex, "go");
      await host.call("surface.close", { surface_id: cl });
      await typeLine(host, ok, "it");
      const [rEx, rCl, rOk] = [await finish(waits[0]), await finish(waits[1]), await finish(waits[2])];
      assert.equal(rEx.code, 1, rEx.stderr);
      assert.match(rEx.stderr, new RegExp(`Pane ${ex} exited \\(exit code 5\\)`));
      assert.equal(rEx.stdout, "");
      assert.equal(rCl.code, 1, rCl.stderr);
      assert.match(rCl.stderr, new RegExp(`Pane ${cl} was closed`));
      assert.equal(rOk.code, 0, rOk.stderr);
      assert.equal(rOk.stdout, `${ok} (ok): line 1: FOUND-it`);

      // Under --any, a pane that exits leaves the others to match.
      const dir = `${host.dir}/anyexit`;
      await Deno.mkdir(dir);
      const quitter = await newPane(host, "stty -echo; read x; exit 2", "quitter", dir);
      // It says when its echo is off: a line typed before that would be echoed (a loaded machine).
      const stayer = await newPane(host, "stty -echo; echo ready; exec cat", "stayer", dir);
      await waitUntil("both panes in the dir", async () => {
        const { surfaces } = await host.call("surface.list");
        return surfaces.filter((p) => p.cwd === dir).length === 2;
      });
      await waitUntil("the stayer's echo off", () => screenHas(host, String(stayer), "ready"));
      const [anyWait] = await startWaits(host, [["--match", `cwd:${dir}`, "--pattern", "LAST", "--any"]]);
      waits.push(anyWait);
      await typeLine(host, quitter, "bye");
      await waitUntil("the quitter to exit", () => hasExited(host, quitter));
      assert.ok(!anyWait.done(), `--any gave up when one pane exited: ${anyWait.stderr()}`);
      await typeLine(host, stayer, "LAST");
      const rAny = await finish(anyWait);
      assert.equal(rAny.code, 0, rAny.stderr);
      assert.equal(rAny.stdout, `${stayer} (stayer): line 2: LAST`);

      // A pane that had already exited cannot satisfy a wait: exit 1 at once, not a timeout.
      await waitUntil("the gone pane to exit", () => hasExited(host, gone));
      const r = await host.cli(["wait", "--match", "gone", "--pattern", "NEVER", "--timeout", "20"]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`Pane ${gone} exited \\(exit code 7\\)`));
    } finally {
      await reap(waits);
    }
  });
});
