/**
 * The real opencode 1.18.33 (tests/_opencode.ts) against the Responses API
 * mock (tests/_mock_openai.ts), offline, driven through paneflow's verbs
 * (tests/_agent_scenario.ts): a turn, a permission dialog for a shell command
 * (opencode is configured to ask for `bash`) approved through paneflow, an
 * interrupt (Esc twice: opencode asks for a second one), an API error,
 * consecutive submits (each one turn at the mock), exit, and no opencode
 * process left behind; from the screen alone (src/agents/opencode_screen.ts).
 */
import { ok, waitScreen } from "./_agents.ts";
import { type AgentKit, runScenario, type Timings } from "./_agent_scenario.ts";
import { withHost } from "./_harness.ts";
import { startMockOpenAi } from "./_mock_openai.ts";
import { ensureOpencode, isOpencodeIdle, opencodeCommand, prepareOpencodeEnv } from "./_opencode.ts";

Deno.test("agents: opencode driven through paneflow, from the screen alone", async (t) => {
  const bin = await ensureOpencode();
  const mock = await startMockOpenAi();
  const timings: Timings = {};
  const env = await prepareOpencodeEnv({ baseUrl: mock.baseUrl, config: { permission: { bash: "ask" } } });
  try {
    await withHost({}, async (host) => {
      const pane = "oc-screen";
      await ok(host, [
        "new",
        "-c",
        opencodeCommand(bin),
        "--pane-name",
        pane,
        "--cwd",
        env.projectDir,
        ...env.envArgs,
      ]);
      const kit: AgentKit = {
        family: "opencode",
        pane,
        hooked: false,
        root: env.root,
        projectDir: env.projectDir,
        turns: () => mock.turns().length,
        prompts: () => mock.turns().map((r) => r.prompt ?? ""),
        dialogPrompt: (cmd) => `RUN ${cmd}`,
        dialogShown: (s) => /△ Permission required/.test(s),
        idle: isOpencodeIdle,
        replied: (s, text) => s.split("\n").some((l) => l.startsWith(`     ${text}`)),
        quit: ["ctrl-c"],
        // "Allow once" is preselected; the dialog takes Enter (which `key` refuses): a bare CR.
        approve: () => ok(host, ["send", pane, "\r"]).then(() => {}),
        // The first Esc asks for a second one (`esc again to interrupt`).
        interrupt: async () => {
          await ok(host, ["key", pane, "esc"]);
          await waitScreen(
            host,
            pane,
            "esc again",
            (s) => /esc again to interrupt|· interrupted/.test(s),
            3000,
          )
            .catch(() => {});
          await ok(host, ["key", pane, "esc"]);
        },
      };
      await runScenario(host, kit, t, { submits: 5, timings });
    });
  } finally {
    await mock.close();
    await env.cleanup();
    console.log(JSON.stringify(timings));
  }
});
