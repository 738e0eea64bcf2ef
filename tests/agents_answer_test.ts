/**
 * `paneflow answer` / `surface.answer` on the real agent CLIs, offline
 * against their mocks: Claude Code's permission dialog (approved, then one
 * denied, with a stale dialog id and an unknown option refused), Codex's
 * hooks review (trusted) and approval dialog (an option picked by label),
 * Gemini CLI's confirmation (denied) and opencode's permission dialog
 * (approved: Enter, which `key` refuses). Each answer must take the dialog
 * off the screen and move the state on. The four agents start at once in
 * one host, so their start-ups overlap.
 */
import assert from "node:assert/strict";
import type { AnswerResult } from "../src/typing/mod.ts";
import { results } from "../src/spec/results.ts";
import { type AgentStatus, ok, screen, startAgent, submit, waitScreen, waitStatus } from "./_agents.ts";
import { codexCommand, ensureCodex, isCodexIdle, prepareCodexEnv } from "./_codex.ts";
import { ensureGemini, geminiCommand, prepareGeminiEnv } from "./_gemini.ts";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";
import { startMockGemini } from "./_mock_gemini.ts";
import { startMockOpenAi } from "./_mock_openai.ts";
import { startWeb } from "./_web.ts";
import { ensureOpencode, isOpencodeIdle, opencodeCommand, prepareOpencodeEnv } from "./_opencode.ts";

/** `paneflow answer <pane> <answer> [--dialog id] --json`: the result, checked against its schema. */
async function answer(host: TestHost, pane: string, what: string, dialog?: string): Promise<AnswerResult> {
  const r = await host.cli(["answer", pane, what, ...(dialog ? ["--dialog", dialog] : []), "--json"]);
  assert.equal(r.code, 0, `answer ${pane} ${what}: ${r.stderr}\n--- screen ---\n${await screen(host, pane)}`);
  const parsed = results["surface.answer"].safeParse(JSON.parse(r.stdout));
  assert.ok(parsed.success, r.stdout);
  assert.deepEqual(parsed.data, JSON.parse(r.stdout), "no field the schema leaves out");
  const result = parsed.data as AnswerResult;
  assert.equal(result.closed, true);
  return result;
}

/** Waits for a dialog in `pane`'s status (waiting_for_input with a dialog id) and the screen's `shown`. */
async function dialogUp(host: TestHost, pane: string, shown: (s: string) => boolean): Promise<AgentStatus> {
  await waitScreen(host, pane, "the dialog", shown, 60_000);
  return await waitStatus(
    host,
    pane,
    "the dialog in status",
    (s) => s.state === "waiting_for_input" && s.dialog_id !== null,
    15_000,
  );
}

/**
 * Answers like `paneflow web`'s fleet card button does: a page connection that waits until the
 * view's fleet shows the pane's dialog, sends `{t: "answer"}` with that dialog's id, and returns
 * any error the view sent back (none: []).
 */
async function answerFromWebView(
  base: string,
  token: string,
  id: number,
  dialogId: string,
  answer: "approve" | "deny",
  done: () => Promise<boolean>,
): Promise<string[]> {
  const ws = new WebSocket(`${base.replace("http", "ws")}ws`, ["paneflow", `paneflow-token.${token}`]);
  const errors: string[] = [];
  let sent = false;
  let input: { enabled: boolean; answer: boolean } | null = null;
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    // The newest word on input: the view may greet the page before it has reached the host.
    if (m.t === "hello" || (m.t === "host" && m.input)) input = m.input;
    if (m.t === "error") errors.push(m.message);
    const shown = m.t === "fleet" &&
      m.agents.some((a: { surface_id: number; dialog_id: string | null }) =>
        a.surface_id === id && a.dialog_id === dialogId
      );
    if (shown && !sent) {
      sent = true;
      ws.send(JSON.stringify({ t: "answer", id, answer, dialog_id: dialogId }));
    }
  };
  try {
    await waitUntil("the web view to answer", async () => errors.length > 0 || (sent && await done()), {
      timeoutMs: 15_000,
    });
  } finally {
    ws.close();
  }
  assert.deepEqual(input, { enabled: true, reason: null, answer: true }, "the page may answer");
  return errors;
}

/** A refused answer: exit 1, one line naming why. */
async function refused(host: TestHost, args: string[], message: RegExp): Promise<void> {
  const r = await host.cli(["answer", ...args]);
  assert.equal(r.code, 1, `answer ${args.join(" ")}: ${r.stdout}${r.stderr}`);
  assert.match(r.stderr.trim(), message);
  assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
}

Deno.test("answer: the gate, and a pane without a dialog", async () => {
  await withHost({ scripting: false }, async (host) => {
    await ok(host, ["new", "--pane-name", "sh"]);
    await refused(
      host,
      ["sh", "approve"],
      /^paneflow: Refused: surface\.answer is gated: .*PANEFLOW_IPC_SCRIPTING=1/,
    );
  });
  await withHost({}, async (host) => {
    await ok(host, ["new", "--pane-name", "sh"]);
    await refused(host, ["sh", "approve"], /shows no dialog to answer: no agent paneflow knows runs in it$/);
    const r = await host.cli(["answer", "sh", "approve", "--dialog", "nothex"]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /"--dialog": "nothex" is not a dialog id/);
    const bad = await host.rpc("surface.answer", { surface_id: 1, answer: "approve", dialog_id: "xyz" });
    assert.match(
      String((bad.error as { message: string }).message),
      /"dialog_id": a dialog id is 8 hex digits$/,
    );
  });
});

Deno.test("answer: the real Claude Code, Codex, Gemini CLI and opencode dialogs", async (t) => {
  const [codexBin, geminiJs, opencodeBin] = await Promise.all([
    ensureCodex(),
    ensureGemini(),
    ensureOpencode(),
  ]);
  const openai = await startMockOpenAi();
  const gemini = await startMockGemini();
  const cleanups: (() => Promise<void>)[] = [];
  try {
    await withHost({}, async (host) => {
      // Everything starts at once; Claude Code (started by startAgent) waits for its composer.
      const cx = await prepareCodexEnv({ baseUrl: openai.baseUrl });
      const gm = await prepareGeminiEnv({ url: gemini.url });
      const oc = await prepareOpencodeEnv({
        baseUrl: openai.baseUrl,
        config: { permission: { bash: "ask" } },
      });
      cleanups.push(cx.cleanup, gm.cleanup, oc.cleanup);
      await ok(host, ["hooks", "setup", "--agent", "codex"], cx.env);
      const panes: [string, string, string, string[]][] = [
        ["cx", codexCommand(codexBin), cx.projectDir, cx.envArgs],
        ["gm", geminiCommand(geminiJs), gm.projectDir, gm.envArgs],
        ["oc", opencodeCommand(opencodeBin), oc.projectDir, oc.envArgs],
      ];
      for (const [name, command, cwd, envArgs] of panes) {
        await ok(host, ["new", "-c", command, "--pane-name", name, "--cwd", cwd, ...envArgs]);
      }
      const cs = await startAgent(host, { name: "cs", hooked: false });
      cleanups.push(cs.dispose);

      await t.step(
        "Claude Code: an unknown option and a stale id are refused; approve runs the command",
        async () => {
          cs.mock.enqueue({ kind: "bash", command: "touch approved.txt", then: "Approved and done." });
          assert.equal((await submit(host, "cs", "make the approved file")).status, "submitted");
          const first = await dialogUp(host, "cs", (s) => /Do you want to proceed\?/.test(s));
          assert.match(first.message ?? "", /touch approved\.txt/);
          await refused(host, ["cs", "9"], /Option 9 is not one of the dialog's options \(1\. "Yes", 2\./);
          await refused(
            host,
            ["cs", "approve", "--dialog", "00000000"],
            /Dialog "00000000" is no longer on pane/,
          );
          const r = await answer(host, "cs", "approve", first.dialog_id!);
          assert.deepEqual([r.dialog_id, r.rule, r.keys, r.option], [first.dialog_id, "permission_dialog", [
            "1",
          ], null]);
          assert.match(r.question ?? "", /touch approved\.txt/);
          assert.doesNotMatch(await screen(host, "cs"), /Do you want to proceed\?/);
          const done = await waitStatus(host, "cs", "finished", (s) => s.state === "finished", 15_000);
          assert.equal(done.dialog_id, null);
          assert.ok((await Deno.stat(`${cs.setup.projectDir}/approved.txt`)).isFile);

          // The next dialog is another one: the first one's id is stale now.
          cs.mock.enqueue({ kind: "bash", command: "touch denied.txt", then: "Never shown." });
          assert.equal((await submit(host, "cs", "make the denied file")).status, "submitted");
          const second = await dialogUp(
            host,
            "cs",
            (s) => /touch denied\.txt/.test(s) && /Do you want/.test(s),
          );
          assert.notEqual(second.dialog_id, first.dialog_id);
          await refused(
            host,
            ["cs", "deny", "--dialog", first.dialog_id!],
            /is no longer on pane \d+; it shows dialog/,
          );
          const d = await answer(host, "cs", "deny", second.dialog_id!);
          assert.deepEqual(d.keys, ["esc"]);
          const after = await waitStatus(
            host,
            "cs",
            "the refusal",
            (s) =>
              s.state === "waiting_for_input" && /Interrupted/.test(s.message ?? "") && s.dialog_id === null,
          );
          assert.equal(after.tool, "claude");
          assert.equal(
            await Deno.stat(`${cs.setup.projectDir}/denied.txt`).catch(() => null),
            null,
          );
        },
      );

      await t.step(
        "Codex: the hooks review is trusted; the approval dialog is answered by label",
        async () => {
          const review = await dialogUp(host, "cx", (s) => /Hooks need review/.test(s));
          assert.match(review.message ?? "", /review its hooks/);
          const r = await answer(host, "cx", "approve", review.dialog_id!);
          assert.deepEqual([r.rule, r.keys], ["trust_dialog", ["2", "enter"]]);
          await waitScreen(host, "cx", "Codex idle", (s) => isCodexIdle(s) && !/Hooks need review/.test(s));
          await waitStatus(
            host,
            "cx",
            "idle",
            (s) => ["idle", "finished"].includes(s.state) && s.dialog_id === null,
          );
          assert.match(await Deno.readTextFile(`${cx.codexHome}/config.toml`), /trusted_hash/);

          assert.equal((await submit(host, "cx", "RUN! echo codex > codex.txt")).status, "submitted");
          const up = await dialogUp(
            host,
            "cx",
            (s) => /Would you like to run the following command\?/.test(s),
          );
          const a = await answer(host, "cx", "yes, proceed", up.dialog_id!);
          assert.deepEqual([a.option, a.keys], ["Yes, proceed (y)", ["1"]]);
          await waitScreen(
            host,
            "cx",
            "the command's reply",
            (s) => s.includes("DONE:") && isCodexIdle(s),
            20_000,
          );
          await waitStatus(
            host,
            "cx",
            "finished",
            (s) => s.state === "finished" && s.dialog_id === null,
            15_000,
          );
          assert.equal((await Deno.readTextFile(`${cx.projectDir}/codex.txt`)).trim(), "codex");
          // The hooks run now that they are trusted.
          assert.equal(
            (await waitStatus(host, "cx", "hooked", (s) => s.hooked, 10_000)).tool,
            "codex",
          );
        },
      );

      await t.step("Gemini CLI: the confirmation is denied from the web view's fleet card", async () => {
        await waitStatus(
          host,
          "gm",
          "Gemini idle",
          (s) => s.tool === "gemini" && ["idle", "finished"].includes(s.state),
          90_000,
        );
        assert.equal((await submit(host, "gm", "RUN echo gemini > gemini.txt")).status, "submitted");
        const up = await dialogUp(host, "gm", (s) => /Allow execution of/.test(s));
        const web = await startWeb(host, ["--listen", "127.0.0.1:0", "--input"]);
        try {
          const gone = async () => !/Allow execution of/.test(await screen(host, "gm"));
          const errors = await answerFromWebView(
            web.base,
            web.token,
            up.surface_id,
            up.dialog_id!,
            "deny",
            gone,
          );
          assert.deepEqual(errors, []);
        } finally {
          await web.stop();
        }
        await waitStatus(
          host,
          "gm",
          "the refusal",
          (s) =>
            s.state === "waiting_for_input" && /Request cancelled/.test(s.message ?? "") &&
            s.dialog_id === null,
        );
        assert.equal(await Deno.stat(`${gm.projectDir}/gemini.txt`).catch(() => null), null);
      });

      await t.step("opencode: the permission dialog is approved (Enter)", async () => {
        await waitStatus(
          host,
          "oc",
          "opencode idle",
          (s) => s.tool === "opencode" && ["idle", "finished"].includes(s.state),
          90_000,
        );
        assert.equal((await submit(host, "oc", "RUN echo opencode > opencode.txt")).status, "submitted");
        const up = await dialogUp(host, "oc", (s) => /△ Permission required/.test(s));
        assert.equal((await host.cli(["key", "oc", "enter"])).code, 2, "key still refuses Enter");
        const r = await answer(host, "oc", "approve", up.dialog_id!);
        assert.deepEqual(r.keys, ["enter"]);
        await waitScreen(
          host,
          "oc",
          "the command's reply",
          (s) => s.includes("DONE:") && isOpencodeIdle(s),
          20_000,
        );
        await waitStatus(
          host,
          "oc",
          "finished",
          (s) => s.state === "finished" && s.dialog_id === null,
          15_000,
        );
        assert.equal((await Deno.readTextFile(`${oc.projectDir}/opencode.txt`)).trim(), "opencode");
      });

      for (const pane of ["cs", "cx", "gm", "oc"]) await ok(host, ["close", pane]);
    });
  } finally {
    await openai.close();
    await gemini.close();
    for (const c of cleanups) await c();
  }
});
