/**
 * The usage ledger with real agents offline (docs/usage.md): two Claude Code
 * panes and a Codex pane, started by `up` with their per-launch hooks, run
 * several turns (one with a tool call) against the mocks; `paneflow usage
 * --json` then equals what the mocks reported, per pane and in total, and a
 * host restart changes nothing.
 */
import assert from "node:assert/strict";
import { ok, waitStatus } from "./_agents.ts";
import { ensureClaude, prepareClaudeEnv } from "./_claude.ts";
import { codexCommand, ensureCodex, prepareCodexEnv } from "./_codex.ts";
import { ROOT, startHost, type TestHost, waitUntil } from "./_harness.ts";
import { startMockAnthropic } from "./_mock_anthropic.ts";
import { startMockOpenAi } from "./_mock_openai.ts";
import type { Result } from "../src/spec/results.ts";

type Usage = Result<"usage.get">;

const toml = (env: Record<string, string>) =>
  `{ ${Object.entries(env).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")} }`;

async function usage(host: TestHost, by = "pane"): Promise<Usage> {
  return await host.json<Usage>(["usage", "--by", by, "--json"]);
}

Deno.test("usage: the ledger of two Claude Code panes and a Codex pane equals the mocks' sums", async () => {
  const [claude, codex] = await Promise.all([ensureClaude(), ensureCodex()]);
  const anthropic = await startMockAnthropic();
  const openai = await startMockOpenAi();
  const cx = await prepareCodexEnv({ baseUrl: openai.baseUrl });
  const claudeEnv = () =>
    prepareClaudeEnv({
      baseUrl: anthropic.url,
      settings: { permissions: { defaultMode: "default", allow: ["Bash(echo:*)"] } },
    });
  const [cc, cc2] = await Promise.all([claudeEnv(), claudeEnv()]);
  const state = await Deno.makeTempDir({ prefix: "pf-usage-state-" });
  const dir = await Deno.makeTempDir({ prefix: "pf-usage-" });
  const config = JSON.stringify({
    agents: { claude: { command: claude }, codex: { command: codexCommand(codex) } },
  });
  const hostOpts = { config, dir, env: { XDG_STATE_HOME: state } };
  let host: TestHost | null = await startHost(hostOpts);
  try {
    const spec = `${dir}/usage.toml`;
    const pane = (name: string, agent: string, cwd: string, env: Record<string, string>) =>
      `[[panes]]\nname = "${name}"\nagent = "${agent}"\ncwd = ${JSON.stringify(cwd)}\nenv = ${toml(env)}\n`;
    await Deno.writeTextFile(
      spec,
      `name = "spend"\n\n${pane("cc1", "claude", cc.projectDir, cc.env)}\n${
        pane("cc2", "claude", cc2.projectDir, cc2.env)
      }\n${pane("cx", "codex", cx.projectDir, cx.env)}`,
    );
    const up = await host.cli(["up", spec, "--json"]);
    assert.equal(up.code, 0, up.stderr + up.stdout);
    const h = host;
    const turn = async (name: string, text: string, turns: number) => {
      await waitStatus(
        h,
        name,
        `${name} idle`,
        (s) => s.tool !== null && ["idle", "finished"].includes(s.state),
        40_000,
      );
      await ok(h, ["send", name, text, "--submit"]);
      await waitUntil(`${name}'s turn ${turns} in the ledger`, async () => {
        const u = await usage(h);
        const g = u.groups.find((g) => g.name === name);
        return g && g.turns >= turns && (await h.call("surface.status", { surface_id: g.surface_id! }))
              .state === "finished" &&
          g;
      }, { timeoutMs: 40_000 });
    };
    anthropic.enqueue({ kind: "text", text: "First answer, in a few words." });
    await turn("cc1", "hello", 1);
    anthropic.enqueue({ kind: "bash", command: "echo tool-ran", then: "The command printed tool-ran." });
    await turn("cc1", "run echo", 2);
    anthropic.enqueue({ kind: "text", text: "Second pane answers.", chunks: 5 });
    await turn("cc2", "hi there", 1);
    await turn("cx", "ECHO codex answers", 1);
    await turn("cx", "RUN echo codex-tool", 2);

    // What the mocks reported: Claude Code's main-loop messages, Codex's turn and follow-up requests.
    const mainIds = new Set(anthropic.sent.map((u) => u.id));
    const claudeSum = anthropic.sent.reduce((a, u) => ({
      input: a.input + u.input_tokens,
      output: a.output + u.output_tokens,
      messages: a.messages + 1,
    }), { input: 0, output: 0, messages: 0 });
    const codexRequests = openai.requests.filter((r) => r.kind === "turn" || r.kind === "followup").length;
    const expected = async (h: TestHost) => {
      // The last lines of a transcript can land after the Stop hook: the ledger reads again shortly after.
      await waitUntil("the ledger to hold every message the mock sent", async () => {
        const t = (await usage(h)).total;
        return t.messages >= claudeSum.messages + codexRequests && t;
      }, { timeoutMs: 10_000 });
      const u = await usage(h);
      const byAgent = await usage(h, "agent");
      assert.deepEqual(byAgent.groups.map((g) => g.key).sort(), ["claude", "codex"]);
      const claudeRow = byAgent.groups.find((g) => g.key === "claude")!;
      const codexRow = byAgent.groups.find((g) => g.key === "codex")!;
      // The mock's Responses usage: 10 input (none cached) and 5 output tokens a request. Codex
      // records its thread-title request in the same rollout in some runs and not in others.
      const titles = openai.requests.filter((r) => r.kind === "title").length;
      const n = codexRow.messages;
      assert.ok(n >= codexRequests && n <= codexRequests + titles, `${n} Codex requests counted`);
      assert.deepEqual(
        { input: codexRow.input_tokens, output: codexRow.output_tokens },
        { input: 10 * n, output: 5 * n },
      );
      assert.equal(mainIds.size, claudeSum.messages);
      assert.deepEqual(
        { input: claudeRow.input_tokens, output: claudeRow.output_tokens, messages: claudeRow.messages },
        claudeSum,
      );
      assert.equal(u.total.total_tokens, claudeSum.input + claudeSum.output + 15 * n);
      assert.equal(u.total.turns, 5);
      assert.deepEqual(u.groups.map((g) => [g.name, g.turns]).sort(), [["cc1", 2], ["cc2", 1], ["cx", 2]]);
      return u;
    };
    const before = await expected(host);
    // ps and status show each pane's spend.
    const ps = await host.json<Result<"fleet.list">>(["ps", "--json"]);
    for (const g of before.groups) {
      const a = ps.agents.find((a) => a.surface_id === g.surface_id)!;
      assert.equal(a.total_tokens, g.total_tokens);
      assert.equal(a.cost_usd, g.cost_usd);
    }
    assert.match((await host.cli(["ps"])).stdout, /^ID +NAME +WS +TOOL +STATE +COST/);
    const cc1 = before.groups.find((g) => g.name === "cc1")!;
    assert.match(
      await ok(host, ["status", "cc1"]),
      new RegExp(`\\(\\$[0-9.]+, ${cc1.total_tokens} tokens\\)`),
    );
    await host.stop();
    host = null;
    host = await startHost(hostOpts);
    const after = await expected(host);
    assert.deepEqual(after.total, before.total);
    assert.deepEqual(
      after.groups.map((g) => ({ ...g, live: undefined, key: undefined })),
      before.groups.map((g) => ({ ...g, live: undefined, key: undefined })),
    );
  } finally {
    await host?.stop();
    await anthropic.close();
    await cc.cleanup();
    await cc2.cleanup();
    await openai.close();
    await cx.cleanup();
    await Deno.remove(state, { recursive: true }).catch(() => {});
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});

Deno.test("usage: a spent token budget refuses the next submit to Claude Code until it is raised", async () => {
  const claude = await ensureClaude();
  const anthropic = await startMockAnthropic();
  const cc = await prepareClaudeEnv({ baseUrl: anthropic.url });
  const state = await Deno.makeTempDir({ prefix: "pf-budget-state-" });
  const config = JSON.stringify({ agents: { claude: { command: claude } } });
  const host = await startHost({ config, env: { XDG_STATE_HOME: state } });
  try {
    const spec = `${host.dir}/budget.toml`;
    await Deno.writeTextFile(
      spec,
      `name = "b"\n\n[[panes]]\nname = "cc"\nagent = "claude"\ncwd = ${
        JSON.stringify(cc.projectDir)
      }\nenv = ${toml(cc.env)}\n`,
    );
    const up = await host.cli(["up", spec]);
    assert.equal(up.code, 0, up.stderr + up.stdout);
    await waitStatus(host, "cc", "cc idle", (s) => s.tool === "claude" && s.state === "idle", 40_000);
    // One mock message is 25 input tokens and a few output tokens: the second turn crosses 40.
    const set = JSON.parse(await ok(host, ["budget", "cc", "--tokens", "40", "--json"]));
    assert.equal(set.over, false);
    // The events the crossing publishes, as `paneflow watch` shows them.
    const watch = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        "--quiet",
        `--config=${ROOT}deno.json`,
        `${ROOT}main.ts`,
        "watch",
        "--type",
        "budget_warning",
        "--type",
        "budget_exceeded",
      ],
      env: host.env,
      stdout: "piped",
      stderr: "null",
    }).spawn();
    let seen = "";
    const reading = (async () => {
      for await (const chunk of watch.stdout.pipeThrough(new TextDecoderStream())) seen += chunk;
    })();
    const finish = async (text: string, n: number) => {
      await ok(host, ["send", "cc", text, "--submit"]);
      await waitUntil(`turn ${n} counted`, async () => {
        const u = await usage(host);
        return u.total.messages >= n && (await host.call("fleet.list")).agents[0].state === "finished";
      }, { timeoutMs: 30_000 });
    };
    anthropic.enqueue({ kind: "text", text: "One." });
    await finish("first", 1);
    anthropic.enqueue({ kind: "text", text: "Two." });
    await finish("second", 2);
    await waitUntil("budget_exceeded on the event stream", () => seen.includes('"budget_exceeded"') && seen, {
      timeoutMs: 10_000,
    });
    watch.kill();
    await reading;
    await watch.status;
    assert.match(seen, /"type":"budget_warning"/);
    // The next submit is refused with the budget's message, and nothing reaches the agent.
    const refused = await host.cli(["send", "cc", "third", "--submit"]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /The budget of pane \d+ \("cc"\) \(40 tokens\) is spent: .* tokens so far/);
    assert.equal(anthropic.prompts().length, 2);
    // Raised, the next one goes through.
    const raised = JSON.parse(await ok(host, ["budget", "cc", "--tokens", "100000", "--json"]));
    assert.equal(raised.over, false);
    anthropic.enqueue({ kind: "text", text: "Three." });
    await finish("third", 3);
    assert.equal(anthropic.prompts().length, 3);
  } finally {
    await host.stop();
    await anthropic.close();
    await cc.cleanup();
    await Deno.remove(state, { recursive: true }).catch(() => {});
  }
});
