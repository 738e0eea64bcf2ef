/**
 * The real opencode 1.18.33 (tests/_opencode.ts) against the Responses API
 * mock (tests/_mock_openai.ts), offline, driven through paneflow's verbs
 * (tests/_agent_scenario.ts): a turn, a permission dialog for a shell command
 * (opencode is configured to ask for `bash`) approved through paneflow, an
 * interrupt (Esc twice: opencode asks for a second one), an API error,
 * consecutive submits (each one turn at the mock), exit, and no opencode
 * process left behind: once with the plugin `paneflow hooks setup --agent
 * opencode` installs (the hook frames drive the state, with `last_result`),
 * once from the screen alone (src/agents/opencode_screen.ts).
 */
import assert from "node:assert/strict";
import { ok, status, waitScreen } from "./_agents.ts";
import { type AgentKit, runScenario, type Timings } from "./_agent_scenario.ts";
import { withHost } from "./_harness.ts";
import { startMockOpenAi } from "./_mock_openai.ts";
import { ensureOpencode, isOpencodeIdle, opencodeCommand, prepareOpencodeEnv } from "./_opencode.ts";

Deno.test("agents: opencode driven through paneflow, with its plugin and from the screen alone", async (t) => {
  const bin = await ensureOpencode();
  const mock = await startMockOpenAi();
  const timings: Timings = {};
  const roots: string[] = [];
  try {
    await withHost({}, async (host) => {
      for (const hooked of [true, false]) {
        const env = await prepareOpencodeEnv({
          baseUrl: mock.baseUrl,
          config: { permission: { bash: "ask" } },
        });
        roots.push(env.root);
        const pane = hooked ? "oc-hooks" : "oc-screen";
        if (hooked) {
          const out = await ok(host, ["hooks", "setup", "--agent", "opencode"], env.env);
          assert.match(out, /plugin installed/);
          const plugin = await Deno.readTextFile(`${env.home}/.config/opencode/plugins/paneflow.js`);
          assert.match(plugin, /^\/\/ paneflow-managed/);
          const st = JSON.parse(
            await ok(host, ["hooks", "status", "--agent", "opencode", "--json"], env.env),
          );
          assert.equal(st.installed, true);
        }
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
          hooked,
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
        await runScenario(host, kit, t, { submits: hooked ? 10 : 5, timings });
        assert.equal(await status(host, pane).catch(() => null), null, "the pane is closed");
      }
    });
  } finally {
    await mock.close();
    for (const r of roots) await Deno.remove(r, { recursive: true }).catch(() => {});
    console.log(JSON.stringify(timings));
  }
});
