/**
 * The real Qwen Code 0.24.4 (tests/_qwen.ts) against the Chat Completions
 * mock (tests/_mock_chat.ts), driven through paneflow's verbs
 * (tests/_agent_scenario.ts): once with the hooks `paneflow hooks setup
 * --agent qwen` installs in its settings.json, once from the screen alone.
 */
import assert from "node:assert/strict";
import { ok, screen, status, waitScreen, waitStatus } from "./_agents.ts";
import { type AgentKit, processesUnder, runScenario, type Timings } from "./_agent_scenario.ts";
import { withHost } from "./_harness.ts";
import { startMockChat } from "./_mock_chat.ts";
import { ensureQwen, isQwenIdle, prepareQwenEnv, qwenCommand } from "./_qwen.ts";
import { qwenComposer } from "../src/agents/qwen_screen.ts";

const SUBMITS = 10;

Deno.test("agents: Qwen Code driven through paneflow, with hooks and from the screen alone", async (t) => {
  const bin = await ensureQwen();
  const mock = await startMockChat();
  const timings: Timings = {};
  const roots: string[] = [];
  try {
    await withHost({}, async (host) => {
      const runs = [];
      for (const hooked of [true, false]) {
        const env = await prepareQwenEnv({ baseUrl: mock.baseUrl });
        roots.push(env.root);
        const pane = hooked ? "qw-hooks" : "qw-screen";
        if (hooked) {
          await ok(host, ["hooks", "setup", "--agent", "qwen"], env.env);
          const settings = JSON.parse(await Deno.readTextFile(`${env.qwenDir}/settings.json`));
          assert.equal(settings.security.auth.selectedType, "openai", "the user's settings are kept");
          assert.deepEqual(Object.keys(settings.hooks).sort(), [
            "Notification",
            "PermissionRequest",
            "PostToolUse",
            "PreToolUse",
            "SessionEnd",
            "SessionStart",
            "Stop",
            "StopFailure",
            "UserPromptSubmit",
          ]);
        }
        await ok(host, [
          "new",
          "-c",
          qwenCommand(bin),
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
          family: "qwen",
          pane,
          hooked,
          root: env.root,
          projectDir: env.projectDir,
          turns: () => mock.turns().length,
          prompts: () => mock.turns().map((r) => r.prompt ?? ""),
          dialogPrompt: (cmd) => `RUN ${cmd}`,
          dialogShown: (s) => /Allow execution of/.test(s),
          idle: isQwenIdle,
          replied: (s, text) => new RegExp(`◆\uFE0E? ${text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`).test(s),
          quit: ["ctrl-c", "ctrl-c"],
          // An Esc before any reply text drops the turn and puts the prompt back into the input;
          // after the reply has begun, Qwen Code says `Request cancelled.`.
          cancelled: (s) =>
            !/esc to cancel/.test(s) &&
            ((isQwenIdle(s) && /Request cancelled\./.test(s)) || qwenComposer(s.split("\n")) === "HOLD"),
          afterInterrupt: async () => {
            if (qwenComposer((await screen(host, pane)).split("\n")) === "") return;
            await ok(host, ["key", pane, "ctrl-c"]);
            await waitScreen(
              host,
              pane,
              "the input cleared",
              (s) => qwenComposer(s.split("\n")) === "",
              5000,
            );
          },
        };
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
