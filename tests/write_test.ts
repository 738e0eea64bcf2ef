/**
 * Writing into panes: the write gate, `send` (raw, nothing appended),
 * `send --submit` / `--paste` (bracketed paste when the program asked for
 * it, ESC[201~ stripped from the payload, CR after the delay), the 64 KiB
 * cap, named keys, keys that would submit, and `send --broadcast`.
 *
 * The panes run `cat -vT` on a raw, non-echoing tty, so the screen shows
 * exactly the bytes the program received (ESC as ^[, CR as ^M, TAB as ^I).
 * Each viewer gets a workspace of its own (200 columns); no test sends it a
 * line feed, so every line break in what it shows is a soft wrap.
 */
import assert from "node:assert/strict";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";

/** A program that shows every byte it receives; `paste` turns on bracketed paste first. */
function viewer({ paste = false, appCursor = false, file = "" } = {}): string {
  const modes = (paste ? "\\033[?2004h" : "") + (appCursor ? "\\033[?1h" : "");
  return `stty raw -echo; printf '${modes}READY\\r\\n'; exec cat -vT ${file}`.trim();
}

/** A pane's raw text over the socket (cheaper than a CLI run inside a polling loop). */
async function paneText(host: TestHost, name: string): Promise<string> {
  const { surfaces } = await host.call("surface.list");
  const id = surfaces.find((s) => s.name === name)?.surface_id;
  if (id === undefined) throw new Error(`no pane named ${name}`);
  return (await host.call("surface.read", { surface_id: id, fenced: false })).text;
}

/** What the viewer pane has shown since READY. */
async function received(host: TestHost, target: string): Promise<string> {
  const text = await paneText(host, target);
  const at = text.indexOf("READY");
  if (at < 0) throw new Error(`pane ${target} is not ready: ${JSON.stringify(text)}`);
  // Everything after READY's line is what cat showed; line breaks are soft wraps.
  return text.slice(at + "READY".length).replaceAll("\n", "");
}

async function newViewer(host: TestHost, name: string, opts: Parameters<typeof viewer>[0] = {}) {
  const r = await host.cli(["new", "--pane-name", name, "-c", viewer(opts)]);
  if (r.code !== 0) throw new Error(`new for ${name}: ${r.stderr}`);
  await waitUntil(`${name} to be ready`, async () => (await paneText(host, name)).includes("READY"));
  return JSON.parse(r.stdout).surface_id as number;
}

async function expectReceived(host: TestHost, target: string, want: string) {
  let last = "";
  try {
    await waitUntil(`${target} to receive ${JSON.stringify(want)}`, async () => {
      last = await received(host, target);
      return last === want;
    }, { timeoutMs: 5000 });
  } catch (e) {
    assert.equal(last, want, (e as Error).message);
  }
}

/** The pane's output generation as its terminal has it (surface.read waits for pending output). */
async function generation(host: TestHost, id: number): Promise<number> {
  return (await host.call("surface.read", { surface_id: id, lines: 1 }))
    .output_generation;
}

Deno.test("write gate: without PANEFLOW_IPC_SCRIPTING send and key are refused with how to enable them", async () => {
  await withHost({ scripting: false }, async (host) => {
    await host.json(["new", "--pane-name", "v", "-c", viewer()]);
    await waitUntil("the viewer", async () => (await paneText(host, "v")).includes("READY"));

    const send = await host.cli(["send", "v", "hello"]);
    assert.equal(send.code, 1);
    assert.equal(send.stdout, "");
    assert.match(send.stderr, /PANEFLOW_IPC_SCRIPTING=1/);
    assert.match(send.stderr, /ai_unrestricted/);
    assert.equal(send.stderr.trim().split("\n").length, 1, send.stderr);

    const submit = await host.cli(["send", "v", "hello", "--submit"]);
    assert.equal(submit.code, 1);
    assert.match(submit.stderr, /PANEFLOW_IPC_SCRIPTING=1/);

    const key = await host.cli(["key", "v", "tab"]);
    assert.equal(key.code, 1);
    assert.match(key.stderr, /PANEFLOW_IPC_SCRIPTING=1/);

    // The gate is the host's environment, not the client's.
    const fromClient = await host.cli(["send", "v", "hello"], { env: { PANEFLOW_IPC_SCRIPTING: "1" } });
    assert.equal(fromClient.code, 1);

    for (
      const [method, params] of [
        ["surface.send_text", { surface_id: 1, text: "x" }],
        ["surface.send_keystroke", { surface_id: 1, keystroke: "tab" }],
      ] as const
    ) {
      const res = await host.rpc(method, params);
      const err = res.error as { code: number; message: string; data: { reason: string } };
      assert.equal(err.code, -32601, method);
      assert.equal(err.data.reason, "gated");
      assert.match(err.message, /PANEFLOW_IPC_SCRIPTING=1/);
    }
    // Gated before validation: a bad payload does not reveal anything either.
    const bad = await host.rpc("surface.send_text", { surface_id: 1, bogus: true });
    assert.equal((bad.error as { code: number }).code, -32601);

    const caps = await host.call("system.capabilities");
    assert.equal(caps.scripting, false);
    assert.ok(!caps.methods.includes("surface.send_text"));
    assert.ok(!caps.methods.includes("surface.send_keystroke"));
    assert.ok(caps.methods.includes("surface.read"), "reads are always allowed");

    assert.equal(await received(host, "v"), "", "nothing reached the pane");
    assert.equal((await host.cli(["read", "v"])).code, 0);
    assert.equal((await host.cli(["search", "v", "READY"])).code, 0);
  });
});

Deno.test("write gate: ai_unrestricted opens send but not key", async () => {
  await withHost({ scripting: false, config: '{"ai_unrestricted": true}' }, async (host) => {
    await host.json(["new", "--pane-name", "v", "-c", viewer()]);
    await waitUntil("the viewer", async () => (await paneText(host, "v")).includes("READY"));
    const send = await host.cli(["send", "v", "abc"]);
    assert.equal(send.code, 0, send.stderr);
    await expectReceived(host, "v", "abc");
    const submit = await host.cli(["send", "v", "de", "--submit"]);
    assert.equal(submit.code, 0, submit.stderr);
    await expectReceived(host, "v", "abcde^M");

    const key = await host.cli(["key", "v", "tab"]);
    assert.equal(key.code, 1);
    assert.match(key.stderr, /PANEFLOW_IPC_SCRIPTING=1/);
    const res = await host.rpc("surface.send_keystroke", { surface_id: 1, keystroke: "tab" });
    assert.equal((res.error as { code: number }).code, -32601);

    const caps = await host.call("system.capabilities");
    assert.equal(caps.scripting, true);
    assert.ok(caps.methods.includes("surface.send_text"));
    assert.ok(!caps.methods.includes("surface.send_keystroke"));
    await expectReceived(host, "v", "abcde^M");
  });
});

Deno.test("send, paste, submit, keys and broadcast deliver exactly the right bytes", async (t) => {
  await withHost({}, async (host) => {
    await host.json(["new", "-c", "sleep 600"]);

    await t.step("send appends nothing", async () => {
      await newViewer(host, "raw");
      assert.equal((await host.cli(["send", "raw", "hello"])).code, 0);
      await expectReceived(host, "raw", "hello");
      // A second send lands right after: no CR or LF was appended in between.
      assert.equal((await host.cli(["send", "raw", " world\t!"])).code, 0);
      await expectReceived(host, "raw", "hello world^I!");
      // --json reports what was written.
      const r = await host.json<Record<string, unknown>>(["send", "raw", "é", "--json"]);
      assert.deepEqual([r.bytes, r.bracketed, r.submitted], [2, false, false]);
      await expectReceived(host, "raw", "hello world^I!M-CM-)");
      // Text "-" reads stdin.
      const stdin = await host.cli(["send", "raw", "-"], { stdin: "from-stdin" });
      assert.equal(stdin.code, 0, stdin.stderr);
      await expectReceived(host, "raw", "hello world^I!M-CM-)from-stdin");
      // Bytes that are not UTF-8 are refused, not replaced with U+FFFD.
      const binary = await host.cli(["send", "raw", "-"], { stdin: new Uint8Array([0xff, 0xfe, 0x61]) });
      assert.equal(binary.code, 2);
      assert.match(binary.stderr, /^paneflow: Standard input is not valid UTF-8; [^\n]*\n$/);
      // Trailing CRs are typed too (Deno drops up to two from argv; /proc/self/cmdline keeps them).
      assert.equal((await host.cli(["send", "raw", "cr\r"])).code, 0);
      await expectReceived(host, "raw", "hello world^I!M-CM-)from-stdincr^M");
      assert.equal((await host.cli(["send", "raw", "3\r\r\r"])).code, 0);
      await expectReceived(host, "raw", "hello world^I!M-CM-)from-stdincr^M3^M^M^M");
    });

    await t.step("send --submit without bracketed paste types the text then CR", async () => {
      await newViewer(host, "plain");
      const r = await host.json<Record<string, unknown>>(["send", "plain", "ls -l", "--submit", "--json"]);
      assert.deepEqual([r.bracketed, r.submitted], [false, true]);
      await expectReceived(host, "plain", "ls -l^M");
      // Line endings that end a submitted text are the Enter --submit presses, not a second one.
      assert.equal((await host.cli(["send", "plain", "pwd\r", "--submit"])).code, 0);
      assert.equal((await host.cli(["send", "plain", "-", "--submit"], { stdin: "id\n" })).code, 0);
      await expectReceived(host, "plain", "ls -l^Mpwd^Mid^M");
    });

    await t.step("send --submit into a bracketed-paste program pastes, then CR after the delay", async () => {
      const id = await newViewer(host, "bp", { paste: true });
      const started = Date.now();
      const r = await host.rpc("surface.send_text", { surface_id: id, text: "hi there", submit: true });
      const elapsed = Date.now() - started;
      assert.deepEqual(r.result, { surface_id: id, bytes: 8, bracketed: true, submitted: true });
      assert.ok(elapsed >= 70, `the CR waited submit_paste_delay_ms (70): ${elapsed} ms`);
      await expectReceived(host, "bp", "^[[200~hi there^[[201~^M");

      // A payload cannot end the paste early: ESC[201~ inside it is stripped.
      assert.equal((await host.cli(["send", "bp", "a\x1b[201~b\x1b[201~", "--submit"])).code, 0);
      await expectReceived(host, "bp", "^[[200~hi there^[[201~^M^[[200~ab^[[201~^M");

      // --paste pastes without submitting; plain send still types raw.
      assert.equal((await host.cli(["send", "bp", "p", "--paste"])).code, 0);
      assert.equal((await host.cli(["send", "bp", "q"])).code, 0);
      await expectReceived(host, "bp", "^[[200~hi there^[[201~^M^[[200~ab^[[201~^M^[[200~p^[[201~q");

      // A CR inside a submitted text is a usage error: --submit adds the one Enter.
      const cr = await host.cli(["send", "bp", "x\ry", "--submit"]);
      assert.equal(cr.code, 2);
      assert.match(cr.stderr, /carriage return/);
    });

    await t.step("one payload is at most 64 KiB of UTF-8", async () => {
      const sink = await host.json<{ surface_id: number }>([
        "new",
        "--pane-name",
        "sink",
        "-c",
        "stty raw -echo; echo READY; exec cat > /dev/null",
      ]);
      await waitUntil("the sink", async () => (await paneText(host, "sink")).includes("READY"));
      const ok = await host.rpc("surface.send_text", {
        surface_id: sink.surface_id,
        text: "x".repeat(65536),
      });
      assert.equal((ok.result as { bytes: number }).bytes, 65536);

      const before = await generation(host, sink.surface_id);
      for (const text of ["x".repeat(65537), "é".repeat(32769)]) {
        const res = await host.rpc("surface.send_text", { surface_id: sink.surface_id, text, submit: true });
        const err = res.error as { code: number; message: string };
        assert.equal(err.code, -32602);
        assert.match(err.message, /"text"/);
        assert.match(err.message, /65536/);
      }
      const cli = await host.cli(["send", "sink", "-"], { stdin: "y".repeat(70_000) });
      assert.notEqual(cli.code, 0);
      assert.equal(cli.code, 2, "a payload over the limit is the caller's mistake");
      assert.match(cli.stderr, /65536/);
      assert.equal(cli.stderr.trim().split("\n").length, 1);
      assert.equal(await generation(host, sink.surface_id), before, "nothing was written");
    });

    await t.step(
      "a full 64 KiB payload arrives whole, in order, however slowly the program reads",
      async () => {
        // The PTY takes ~4 KiB at a time: the rest waits until the program reads it.
        const file = `${host.dir}/received`;
        const payload = Array.from({ length: 1024 }, (_, i) => `${String(i).padStart(63, "0")}\n`).join("");
        assert.equal(payload.length, 65536);
        await host.json([
          "new",
          "--pane-name",
          "slow",
          "-c",
          `stty raw -echo; echo READY; sleep 0.5; exec cat > ${file}`,
        ]);
        await waitUntil("the slow reader", async () => (await paneText(host, "slow")).includes("READY"));
        const sent = await host.cli(["send", "slow", "-"], { stdin: payload });
        assert.equal(sent.code, 0, sent.stderr);
        await waitUntil(
          "every byte in the file",
          async () => (await Deno.readTextFile(file).catch(() => "")).length === 65536,
        );
        assert.equal(await Deno.readTextFile(file), payload);
      },
    );

    await t.step("named keys send the right bytes", async () => {
      const id = await newViewer(host, "keys");
      const keys = [
        ["up", "^[[A"],
        ["down", "^[[B"],
        ["right", "^[[C"],
        ["left", "^[[D"],
        ["tab", "^I"],
        ["shift-tab", "^[[Z"],
        ["esc", "^["],
        ["escape", "^["],
        ["backspace", "^?"],
        ["delete", "^[[3~"],
        ["home", "^[[H"],
        ["end", "^[[F"],
        ["pageup", "^[[5~"],
        ["pagedown", "^[[6~"],
        ["space", " "],
        ["f1", "^[OP"],
        ["f5", "^[[15~"],
        ["f12", "^[[24~"],
        ["ctrl-a", "^A"],
        ["ctrl-z", "^Z"],
        ["alt-x", "^[x"],
        ["CTRL+B", "^B"],
      ];
      const viaCli = new Set(["up", "tab", "ctrl-a", "alt-x", "CTRL+B", "f1"]);
      let want = "";
      for (const [name, shown] of keys) {
        if (viaCli.has(name)) {
          const r = await host.cli(["key", "keys", name]);
          assert.equal(r.code, 0, `${name}: ${r.stderr}`);
          assert.equal(r.stdout, "");
        } else {
          await host.call("surface.send_keystroke", { surface_id: id, keystroke: name });
        }
        want += shown;
        // `read` trims trailing blanks: a space shows once the next key lands.
        if (!want.endsWith(" ")) await expectReceived(host, "keys", want);
      }
      // With application cursor keys on (DECCKM), arrows are SS3.
      await newViewer(host, "app", { appCursor: true });
      assert.equal((await host.cli(["key", "app", "up"])).code, 0);
      assert.equal((await host.cli(["key", "app", "left"])).code, 0);
      await expectReceived(host, "app", "^[OA^[OD");
    });

    await t.step("key refuses enter, ctrl-m, ctrl-j and unknown names, and writes nothing", async () => {
      const id = (await host.call("surface.list"))
        .surfaces.find((s) => s.name === "keys")!.surface_id;
      const before = await received(host, "keys");
      for (const name of ["enter", "return", "ctrl-m", "ctrl-j", "C-m", "alt-enter", "ENTER"]) {
        const r = await host.cli(["key", "keys", name]);
        assert.equal(r.code, 2, `${name}: ${r.stderr}`);
        assert.equal(r.stdout, "");
        assert.match(r.stderr, /refused/, name);
        assert.match(r.stderr, /send --submit/, name);
        assert.equal(r.stderr.trim().split("\n").length, 1);
        const res = await host.rpc("surface.send_keystroke", { surface_id: id, keystroke: name });
        assert.equal((res.error as { code: number }).code, -32602, name);
      }
      const unknown = await host.cli(["key", "keys", "hyper-q"]);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /Unknown key "hyper-q"/);
      assert.match(unknown.stderr, /ctrl-<letter>/);
      // A control character in the name is escaped, so the error stays one line.
      const newline = await host.cli(["key", "keys", "\n\x1b"]);
      assert.equal(newline.code, 2);
      assert.match(newline.stderr, /^paneflow: "keystroke": Unknown key "\\n\\u001b"; known keys: [^\n]*\n$/);
      assert.ok(!newline.stderr.includes("\x1b"), "no raw ESC in the error");
      assert.equal(await received(host, "keys"), before, "nothing was written");
    });

    await t.step("ctrl-c interrupts a running program", async () => {
      await host.json([
        "new",
        "--pane-name",
        "sleeper",
        "-c",
        "trap 'echo interrupted' INT; echo sleeping; sleep 100; echo after=$?; sleep 100",
      ]);
      // The shell is the foreground process (no job control); wait until its child is sleep.
      await waitUntil("sleep to run", async () => {
        const p = (await host.json<{ surfaces: { name: string; pid: number }[] }>(["ls", "--all"])).surfaces
          .find((s) => s.name === "sleeper")!;
        const children = (await Deno.readTextFile(`/proc/${p.pid}/task/${p.pid}/children`)).trim().split(" ");
        const argv = children[0] ? await Deno.readTextFile(`/proc/${children[0]}/cmdline`) : "";
        return argv === "sleep\x00100\x00";
      });
      assert.equal((await host.cli(["key", "sleeper", "ctrl-c"])).code, 0);
      await waitUntil("the interrupt to show", async () => {
        const text = await paneText(host, "sleeper");
        return /interrupted\nafter=130/.test(text);
      });
    });

    await t.step("send --broadcast writes to every pane a cmdline: selector matches", async () => {
      await newViewer(host, "b1", { file: "/dev/stdin" });
      await newViewer(host, "b2", { file: "/dev/stdin" });
      const sel = "cmdline:cat -vT /dev/stdin";
      // Without --broadcast several matches are an error and nothing is sent.
      const many = await host.cli(["send", sel, "one"]);
      assert.equal(many.code, 3);
      assert.match(many.stderr, /matches 2 panes/);
      assert.equal(await received(host, "b1"), "");

      // A pane that once ran the same command and has exited matches too; a broadcast skips it.
      const gone = await host.json<{ surface_id: number }>([
        "new",
        "--pane-name",
        "b3",
        "-c",
        "exit 0; exec cat -vT /dev/stdin",
      ]);
      await waitUntil("b3 to exit", async () => {
        const { surfaces } = await host.call(
          "surface.list",
        );
        return surfaces.find((x) => x.surface_id === gone.surface_id)?.exited;
      });
      const r = await host.cli(["send", sel, "all", "--broadcast", "--submit", "--json"]);
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { results: { surface_id: number; submitted: boolean }[] };
      assert.equal(out.results.length, 2);
      await expectReceived(host, "b1", "all^M");
      await expectReceived(host, "b2", "all^M");
      assert.doesNotMatch(await received(host, "raw"), /all/, "panes that do not match get nothing");

      const onlyExited = await host.cli(["send", "cmdline:exit 0; exec", "x", "--broadcast"]);
      assert.equal(onlyExited.code, 1);
      assert.match(onlyExited.stderr, /has exited/);
      assert.equal(onlyExited.stderr.trim().split("\n").length, 1);

      const none = await host.cli(["send", "cmdline:no-such-program", "x", "--broadcast"]);
      assert.equal(none.code, 3);
      assert.match(none.stderr, /No pane matches/);
    });
  });
});

Deno.test("send: a program that never reads its input fails the write with how much it took", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "--pane-name", "deaf", "-c", "stty raw -echo; echo READY; exec sleep 600"]);
    await waitUntil("the pane", async () => (await paneText(host, "deaf")).includes("READY"));
    const started = Date.now();
    const r = await host.cli(["send", "deaf", "-"], { stdin: "z".repeat(65536) });
    assert.equal(r.code, 1, r.stderr);
    assert.match(
      r.stderr,
      /^paneflow: Pane \d+: the program stopped reading its input: \d+ of 65536 bytes taken, then nothing for 10 s\n$/,
    );
    assert.ok(Date.now() - started >= 10_000);
    // The pane is still there, running, and readable.
    const listed = await host.json<{ surfaces: { name: string; exited?: boolean }[] }>(["ls"]);
    assert.deepEqual(listed.surfaces.map((p) => [p.name, p.exited === true]), [["deaf", false]]);
    assert.match(await paneText(host, "deaf"), /READY/);
  });
});
