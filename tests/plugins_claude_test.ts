/**
 * The built-in claude-code adapter against the real Claude Code 2.1.328,
 * offline (the mock Messages API on 127.0.0.1): start → waiting_for_user_input,
 * turns with their text, a permission dialog approved (and a stale dialog id
 * refused), a cancel mid-turn, an API error with its kind, and 20 turns in a
 * row; a cancel that settles for a client polling `adapter.state` and for
 * `adapter.turn` — all through `paneflow serve --stdio` as ptywright clients
 * drive it.
 */
import assert from "node:assert/strict";
import { ensureClaude, prepareClaudeEnv } from "./_claude.ts";
import { ROOT, waitUntil } from "./_harness.ts";
import { startMockAnthropic } from "./_mock_anthropic.ts";
import { type Msg, PwClient, spawnPaneflow } from "./_pw.ts";

async function serve() {
  const dir = await Deno.makeTempDir({ prefix: "pf-cc-" });
  const child = spawnPaneflow(["serve", "--stdio"], dir);
  const writer = child.stdin.getWriter();
  const errDone = (async () => {
    for await (const _ of child.stderr) { /* drain */ }
  })();
  const client = new PwClient((b) => writer.write(b), child.stdout, "ndjson", async () => {
    try {
      await writer.close();
    } catch { /* closed */ }
  });
  return {
    client,
    async stop() {
      await client.end();
      await child.status;
      await errDone;
      await client.done();
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

// deno-lint-ignore no-explicit-any
type State = { state: string; evidence: string; confidence: number; sequence: number; metadata?: any };

Deno.test("claude-code adapter drives the real Claude Code: turns, permissions, cancel, API errors, 20 turns", async () => {
  const bin = await ensureClaude();
  const mock = await startMockAnthropic();
  const setup = await prepareClaudeEnv({ baseUrl: mock.url });
  const s = await serve();
  const c = s.client;
  // deno-lint-ignore no-explicit-any
  const turn = async (adapter: string, send: unknown, timeout_ms = 60_000): Promise<any> => {
    const m = await c.request("adapter.turn", { adapter, send, wait: { timeout_ms } }, timeout_ms + 10_000);
    if (m.error) {
      const screen = await c.call("adapter.inspect", { adapter, redact: false });
      const log = mock.requests.map((r) => JSON.stringify({ ...r, body: undefined }).slice(0, 300)).join(
        "\n",
      );
      throw new Error(
        `adapter.turn ${JSON.stringify(send)}: ${m.error.message}\n${screen.plain_text}\n${log}`,
      );
    }
    return m.result;
  };
  const stateOf = async (adapter: string): Promise<State> =>
    (await c.call("adapter.state", { adapter })).state;
  try {
    const started = await c.call("adapter.start", {
      plugin: "claude-code",
      program: bin,
      cwd: setup.projectDir,
      env: setup.env,
    });
    const e = started.adapter as string;
    assert.equal(e, "e1");
    assert.equal(typeof started.state.state, "string");
    const ready = await waitUntil("waiting_for_user_input", async () => {
      const st = await stateOf(e);
      return st.state === "waiting_for_user_input" && st;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    assert.equal(ready.evidence, "input prompt glyph detected");
    assert.equal(ready.confidence, 0.62);
    // The manifest's default size (60 x 200) and required env.
    const snap = await c.call("adapter.snapshot", { adapter: e });
    assert.deepEqual([snap.size.rows, snap.size.cols], [60, 200]);

    // One turn.
    mock.enqueue({ kind: "text", text: "Hello from the mock API." });
    const t1 = await turn(e, { intent: "send_prompt", params: { prompt: "hello" } });
    assert.equal(t1.state.state, "completed_turn", JSON.stringify(t1.state));
    assert.equal(t1.state.metadata.turn.text, "Hello from the mock API.");
    assert.equal(t1.state.evidence, "stable input prompt after prompt submission");
    assert.equal(t1.matched.kind, "all");
    assert.equal(mock.prompts()[0].prompt, "hello");

    // A Bash tool call with permissions on: the dialog, a stale id refused, approve continues.
    mock.enqueue({
      kind: "bash",
      command: "touch pf-adapter.txt",
      description: "Create a file",
      then: "Created it.",
    });
    const t2 = await turn(e, { intent: "send_prompt", params: { prompt: "create the file" } });
    assert.equal(t2.state.state, "waiting_for_permission", JSON.stringify(t2.state));
    assert.equal(t2.state.evidence, "permission or approval prompt text detected");
    const perm = t2.state.metadata.permission;
    assert.match(perm.summary, /touch pf-adapter\.txt/);
    assert.equal(perm.tool, "Bash");
    assert.equal(perm.options[0], "Yes");
    assert.match(t2.state.metadata.dialog_id, /^[0-9a-f]{8}$/);
    const stale = await c.request("adapter.send", {
      adapter: e,
      intent: "approve",
      params: { dialog_id: "deadbeef" },
    });
    assert.equal(stale.error?.code, -32603);
    assert.match(stale.error!.message, /stale_dialog/);
    const t3 = await turn(e, { intent: "approve", params: { dialog_id: t2.state.metadata.dialog_id } });
    assert.equal(t3.state.state, "completed_turn", JSON.stringify(t3.state));
    assert.match(t3.state.metadata.turn.text, /Created it\./);
    await Deno.stat(`${setup.projectDir}/pf-adapter.txt`);

    // An API error ends the turn with `error` and a kind.
    mock.enqueue({ kind: "error", status: 500, type: "api_error", message: "Internal server error" });
    const t4 = await turn(e, { intent: "send_prompt", params: { prompt: "trigger an error" } });
    assert.equal(t4.state.state, "error", JSON.stringify(t4.state));
    assert.equal(t4.state.evidence, "visible error banner detected");
    assert.equal(t4.state.metadata.error.kind, "api");
    assert.match(t4.state.metadata.error.message, /500/);

    // Cancel mid-turn: cancelling, then a resting state once the screen settles.
    await waitUntil("every queued reply taken", () => mock.pending() === 0, { timeoutMs: 10_000 });
    mock.enqueue({ kind: "hold", text: "Partial answer" });
    await c.call("adapter.send", { adapter: e, intent: "send_prompt", params: { prompt: "hold on" } });
    await waitUntil("the held turn on screen", async () => {
      const st = await stateOf(e);
      return st.state === "thinking" && st;
    }, { timeoutMs: 20_000, intervalMs: 50 });
    const cancelling = await c.call("adapter.send", { adapter: e, intent: "cancel" });
    assert.equal(cancelling.state.state, "cancelling", JSON.stringify(cancelling.state));
    const settledMsg = await c.request("adapter.wait", {
      adapter: e,
      intent: "wait_cancel_settled_matcher",
      timeout_ms: 30_000,
    }, 40_000);
    if (settledMsg.error) {
      throw new Error(
        `${settledMsg.error.message}\n${(await c.call("adapter.inspect", { adapter: e })).plain_text}`,
      );
    }
    const settled = settledMsg.result;
    if (settled.state.state !== "waiting_for_user_input") {
      // What the screen showed and what the mock was asked: the evidence for a wrong resting state.
      const screen = (await c.call("adapter.inspect", { adapter: e, redact: false })).plain_text;
      const asked = mock.requests.map((r) => JSON.stringify({ ...r, body: undefined, headers: undefined }));
      assert.fail(
        `${JSON.stringify(settled.state)}\n--- screen ---\n${screen}\n--- requests ---\n${asked.join("\n")}`,
      );
    }
    assert.equal((await stateOf(e)).state, "waiting_for_user_input");
    mock.release();

    // 20 turns in a row, each with its own text.
    for (let i = 1; i <= 20; i++) {
      mock.enqueue({ kind: "text", text: `Answer number ${i}.` });
      const t = await turn(e, { intent: "send_prompt", params: { prompt: `question ${i}` } });
      assert.equal(t.state.state, "completed_turn", `turn ${i}: ${JSON.stringify(t.state)}`);
      assert.equal(t.state.metadata.turn.text, `Answer number ${i}.`, `turn ${i}`);
    }
    assert.equal(mock.pending(), 0);

    const inspect = await c.call("adapter.inspect", { adapter: e });
    assert.match(inspect.body_text, /question 20/);
    assert.deepEqual(await c.call("adapter.close", { adapter: e }), { closed: true });

    // The same from a shell: `paneflow adapter start claude-code ... -- <args>`, `turn --text`, `state`.
    const { socket } = await c.call("system.identify");
    const cli = async (args: string[]) => {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", `--config=${ROOT}deno.json`, `${ROOT}main.ts`, ...args],
        env: { PANEFLOW_SOCKET_PATH: socket },
        stdout: "piped",
        stderr: "piped",
      }).output();
      return {
        code: out.code,
        stdout: new TextDecoder().decode(out.stdout),
        stderr: new TextDecoder().decode(out.stderr),
      };
    };
    const envArgs = Object.entries(setup.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
    const st = await cli([
      "adapter",
      "start",
      "claude-code",
      "--cwd",
      setup.projectDir,
      "--program",
      bin,
      ...envArgs,
      "--",
      "--model",
      "claude-sonnet-4-5",
    ]);
    assert.equal(st.code, 0, st.stderr);
    const cliAdapter = JSON.parse(st.stdout).adapter;
    await waitUntil("the CLI's adapter to be ready", async () => {
      const r = await cli(["adapter", "state", cliAdapter]);
      return JSON.parse(r.stdout).state.state === "waiting_for_user_input";
    }, { timeoutMs: 30_000, intervalMs: 200 });
    mock.enqueue({ kind: "text", text: "Shell says hi." });
    const tt = await cli(["adapter", "turn", cliAdapter, "say hi", "--text"]);
    assert.equal(tt.code, 0, tt.stderr);
    assert.equal(tt.stdout, "Shell says hi.\n");
    assert.equal(mock.prompts().at(-1)!.prompt, "say hi");
    assert.equal((await cli(["adapter", "close", cliAdapter])).code, 0);
  } finally {
    await s.stop();
    await mock.close();
    await setup.cleanup();
  }
});

Deno.test("claude-code adapter settles after a cancel: adapter.state polls and adapter.turn reach the input", async () => {
  const bin = await ensureClaude();
  const mock = await startMockAnthropic();
  const setup = await prepareClaudeEnv({ baseUrl: mock.url });
  const s = await serve();
  const c = s.client;
  const stateOf = async (adapter: string): Promise<State> =>
    (await c.call("adapter.state", { adapter })).state;
  const screenOf = async (adapter: string): Promise<string> =>
    (await c.call("adapter.inspect", { adapter, redact: false })).plain_text;
  try {
    const { adapter: e } = await c.call("adapter.start", {
      plugin: "claude-code",
      program: bin,
      cwd: setup.projectDir,
      env: setup.env,
    });
    await waitUntil(
      "waiting_for_user_input",
      async () => (await stateOf(e)).state === "waiting_for_user_input",
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );

    // A slow answer, cancelled once part of it is on screen; then only `adapter.state` polls
    // (no wait, so no `stable_ms`): the adapter must leave `cancelling` by itself.
    mock.enqueue({ kind: "slow", text: "one two three four five six seven eight nine ten", seconds: 30 });
    await c.call("adapter.send", { adapter: e, intent: "send_prompt", params: { prompt: "count slowly" } });
    // Claude Code shows the answer's `●` (its text comes when the line is done): streaming began.
    await waitUntil("the slow answer begun on screen", async () => {
      const st = await stateOf(e);
      return st.state === "thinking" && /^●/m.test(await screenOf(e));
    }, { timeoutMs: 20_000, intervalMs: 50 });
    const sent = await c.call("adapter.send", { adapter: e, intent: "cancel" });
    assert.equal(sent.state.state, "cancelling", JSON.stringify(sent.state));
    assert.match(sent.state.evidence, /cancel intent recently applied/);
    const t0 = Date.now();
    const seen: string[] = [];
    const rested = await waitUntil("a resting state after the cancel (adapter.state)", async () => {
      const st = await stateOf(e);
      if (seen.at(-1) !== st.state) seen.push(st.state);
      return st.state !== "cancelling" && st;
    }, { timeoutMs: 5_000, intervalMs: 50 }).catch(async (err) => {
      throw new Error(`${err.message}\nstates: ${seen.join(" > ")}\n--- screen ---\n${await screenOf(e)}`);
    });
    assert.equal(rested.state, "waiting_for_user_input", `${JSON.stringify(rested)}\n${await screenOf(e)}`);
    assert.equal(rested.evidence, "input prompt glyph detected");
    assert.equal(rested.confidence, 0.62);
    assert.ok(Date.now() - t0 < 5_000);
    assert.match(await screenOf(e), /Interrupted/);
    // It rests there: the next polls say the same.
    assert.equal((await stateOf(e)).state, "waiting_for_user_input");

    // A held answer, cancelled before any of it shows: Claude Code takes the prompt off the
    // transcript and puts it back in the input box. `adapter.turn` with the cancel intent
    // waits with wait_turn_matcher, which must end there too.
    await waitUntil("every queued reply taken", () => mock.pending() === 0, { timeoutMs: 10_000 });
    mock.enqueue({ kind: "hold" });
    await c.call("adapter.send", { adapter: e, intent: "send_prompt", params: { prompt: "hold on" } });
    await waitUntil(
      "the held request at the mock, the turn in flight",
      async () => mock.holding() === 1 && (await stateOf(e)).state === "thinking",
      { timeoutMs: 20_000, intervalMs: 50 },
    );
    const t1 = Date.now();
    const turned = await c.request("adapter.turn", {
      adapter: e,
      send: { intent: "cancel" },
      wait: { timeout_ms: 10_000 },
    }, 20_000);
    if (turned.error) throw new Error(`${turned.error.message}\n--- screen ---\n${await screenOf(e)}`);
    assert.ok(Date.now() - t1 < 5_000, `adapter.turn took ${Date.now() - t1} ms`);
    assert.equal(turned.result.state.state, "waiting_for_user_input", JSON.stringify(turned.result.state));
    assert.equal(turned.result.state.evidence, "input prompt glyph detected");
    assert.equal((await stateOf(e)).state, "waiting_for_user_input");
    mock.release();

    // The adapter is usable after both: the next turn completes with its own text.
    await waitUntil("the held request let go", () => mock.holding() === 0 && mock.pending() === 0);
    mock.enqueue({ kind: "text", text: "After the cancels." });
    const nextMsg = await c.request("adapter.turn", {
      adapter: e,
      send: { intent: "send_prompt", params: { prompt: "carry on" } },
      wait: { timeout_ms: 60_000 },
    }, 70_000);
    if (nextMsg.error) throw new Error(`${nextMsg.error.message}\n--- screen ---\n${await screenOf(e)}`);
    const next = nextMsg.result;
    assert.equal(next.state.state, "completed_turn", JSON.stringify(next.state));
    assert.equal(next.state.metadata.turn.text, "After the cancels.");
    assert.equal(mock.prompts().at(-1)!.prompt, "carry on");
  } finally {
    await s.stop();
    await mock.close();
    await setup.cleanup();
  }
});

export type { Msg };
