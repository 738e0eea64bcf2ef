/**
 * The real Gemini CLI 0.61.0 (tests/_gemini.ts) against the mock Gemini API
 * (tests/_mock_gemini.ts), driven through paneflow's verbs
 * (tests/_agent_scenario.ts): once with the hooks `paneflow hooks setup
 * --agent gemini` installs in its settings.json (truecolor screen), once from
 * the screen alone (no COLORTERM: the other rendering).
 */
import assert from "node:assert/strict";
import { ok, status, waitStatus } from "./_agents.ts";
import { type AgentKit, processesUnder, runScenario, type Timings, transition } from "./_agent_scenario.ts";
import { ensureGemini, geminiCommand, isGeminiIdle, prepareGeminiEnv } from "./_gemini.ts";
import { withHost } from "./_harness.ts";
import { startMockGemini } from "./_mock_gemini.ts";

const SUBMITS = 20;

Deno.test("agents: Gemini CLI driven through paneflow, with hooks and from the screen alone", async (t) => {
  const js = await ensureGemini();
  const mock = await startMockGemini();
  const timings: Timings = {};
  const roots: string[] = [];
  try {
    await withHost({}, async (host) => {
      // Both panes start at once: the second Gemini CLI loads (tens of seconds on a busy machine)
      // while the first one's scenario runs, and then sits idle.
      const runs = [];
      for (const hooked of [true, false]) {
        const env = await prepareGeminiEnv({ url: mock.url, truecolor: hooked });
        roots.push(env.root);
        const pane = hooked ? "gm-hooks" : "gm-screen";
        if (hooked) {
          await ok(host, ["hooks", "setup", "--agent", "gemini"], env.env);
          const settings = JSON.parse(await Deno.readTextFile(`${env.geminiDir}/settings.json`));
          assert.equal(settings.security.auth.selectedType, "gemini-api-key", "the user's settings are kept");
          assert.deepEqual(Object.keys(settings.hooks).sort(), [
            "AfterAgent",
            "AfterTool",
            "BeforeAgent",
            "BeforeTool",
            "Notification",
            "SessionEnd",
            "SessionStart",
          ]);
        }
        await ok(host, [
          "new",
          "-c",
          geminiCommand(js),
          "--pane-name",
          pane,
          "--cwd",
          env.projectDir,
          ...env.envArgs,
        ]);
        runs.push({ hooked, env, pane });
      }
      for (const { hooked, env, pane } of runs) {
        if (hooked) {
          // SessionStart fires when the TUI starts.
          await waitStatus(host, pane, "hooked", (s) => s.hooked && s.state === "idle", 60_000);
        }
        const kit: AgentKit = {
          family: "gemini",
          pane,
          hooked,
          root: env.root,
          projectDir: env.projectDir,
          turns: () => mock.turns().length,
          prompts: () => mock.turns().map((r) => r.prompt ?? ""),
          dialogPrompt: (cmd) => `RUN ${cmd}`,
          dialogShown: (s) => /Allow execution of/.test(s),
          idle: isGeminiIdle,
          replied: (s, text) => s.includes(`✦ ${text}`),
          quit: ["ctrl-c", "ctrl-c"],
        };
        if (hooked) {
          await t.step(
            "hooks: a reply streamed in several chunks keeps its text in last_result",
            async () => {
              await waitStatus(
                host,
                pane,
                "the agent idle",
                (s) => s.tool !== null && s.state === "idle",
                60_000,
              );
              await ok(host, ["send", pane, "CHUNKS 3 twochunks12", "--submit"]);
              await transition(
                host,
                kit,
                "the chunked reply",
                (s) => s.includes("✦ twochunks12") && isGeminiIdle(s),
                (s) => s.state === "finished",
              );
              // The AfterAgent hook (a process of its own) may land after the screen said finished.
              // Its prompt_response is garbled ("twochunks12 hunk s12"); the chat log is not.
              const s = await waitStatus(host, pane, "last_result", (s) => s.last_result !== null, 10_000);
              assert.equal(s.last_result, "twochunks12");
            },
          );
        }
        await runScenario(host, kit, t, { submits: hooked ? SUBMITS : 5, timings });
        assert.equal(await status(host, pane).catch(() => null), null, "the pane is closed");
        assert.deepEqual(processesUnder(env.root), []);
      }
    });
  } finally {
    await mock.close();
    for (const r of roots) await Deno.remove(r, { recursive: true }).catch(() => {});
    console.log(JSON.stringify(timings));
  }
});
