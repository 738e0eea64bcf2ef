/**
 * The real Codex CLI 0.169.0 (tests/_codex.ts) against the mock Responses API
 * (tests/_mock_openai.ts), driven through paneflow's verbs
 * (tests/_agent_scenario.ts): once with the hooks `paneflow hooks setup
 * --agent codex` installs (hooks.json + notify; the "Hooks need review"
 * dialog is answered with `paneflow answer`, as a user would), once from the
 * screen alone.
 */
import assert from "node:assert/strict";
import { ok, status, waitScreen, waitStatus } from "./_agents.ts";
import { type AgentKit, processesUnder, runScenario, type Timings } from "./_agent_scenario.ts";
import { codexCommand, ensureCodex, isCodexIdle, prepareCodexEnv } from "./_codex.ts";
import { withHost } from "./_harness.ts";
import { startMockOpenAi } from "./_mock_openai.ts";

const SUBMITS = 20;

Deno.test("agents: Codex CLI driven through paneflow, with hooks and from the screen alone", async (t) => {
  const bin = await ensureCodex();
  const mock = await startMockOpenAi();
  const timings: Timings = {};
  const roots: string[] = [];
  try {
    await withHost({}, async (host) => {
      for (const hooked of [true, false]) {
        const env = await prepareCodexEnv({ baseUrl: mock.baseUrl });
        roots.push(env.root);
        const pane = hooked ? "cx-hooks" : "cx-screen";
        if (hooked) {
          const out = await ok(host, ["hooks", "setup", "--agent", "codex"], env.env);
          assert.match(out, /Hooks need review/);
          const hooksJson = JSON.parse(await Deno.readTextFile(`${env.codexHome}/hooks.json`));
          assert.deepEqual(Object.keys(hooksJson.hooks).sort(), [
            "PermissionRequest",
            "PostToolUse",
            "PreToolUse",
            "SessionStart",
            "Stop",
            "UserPromptSubmit",
          ]);
          assert.match(
            await Deno.readTextFile(`${env.codexHome}/config.toml`),
            /^notify = \[.*# paneflow-managed$/m,
          );
        }
        await ok(host, [
          "new",
          "-c",
          codexCommand(bin),
          "--pane-name",
          pane,
          "--cwd",
          env.projectDir,
          ...env.envArgs,
        ]);
        if (hooked) {
          // Codex asks once to trust the new hooks: waiting_for_input, and answered like a user would.
          const s = await waitStatus(
            host,
            pane,
            "the hooks-review dialog",
            (s) => s.state === "waiting_for_input",
            30_000,
          );
          assert.match(s.message ?? "", /review its hooks/);
          assert.equal(s.hooked, false);
          // "2. Trust all and continue", then Enter: what `paneflow answer <pane> approve` presses.
          await ok(host, ["answer", pane, "approve", "--dialog", s.dialog_id!]);
          await waitScreen(host, pane, "the review answered", (s) => !/Hooks need review/.test(s), 5000);
        }
        const kit: AgentKit = {
          family: "codex",
          pane,
          hooked,
          root: env.root,
          projectDir: env.projectDir,
          turns: () => mock.turns().length,
          prompts: () => mock.turns().map((r) => r.prompt ?? ""),
          dialogPrompt: (cmd) => `RUN! ${cmd}`,
          dialogShown: (s) => /Would you like to run the following command\?/.test(s),
          idle: isCodexIdle,
          replied: (s, text) => s.includes(`• ${text}`),
          quit: ["ctrl-c"],
        };
        await runScenario(host, kit, t, { submits: hooked ? SUBMITS : 5, timings });
        assert.equal(await status(host, pane).catch(() => null), null, "the pane is closed");
        assert.deepEqual(processesUnder(env.root), []);
        // The title side-thread's notify did not count as a turn of the pane.
      }
    });
  } finally {
    await mock.close();
    for (const r of roots) await Deno.remove(r, { recursive: true }).catch(() => {});
    console.log(JSON.stringify(timings));
  }
});
