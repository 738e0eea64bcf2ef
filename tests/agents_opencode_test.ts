/**
 * The real opencode 1.18.33 (tests/_opencode.ts) against the Responses API
 * mock (tests/_mock_openai.ts), offline, driven through paneflow's verbs
 * (tests/_agent_scenario.ts): a turn, a permission dialog for a shell command
 * (opencode is configured to ask for `bash`) approved through paneflow, an
 * interrupt (Esc twice: opencode asks for a second one), an API error,
 * consecutive submits (each one turn at the mock), exit, and no opencode
 * process left behind: once with the plugin `paneflow hooks setup --agent
 * opencode` installs (the hook frames drive the state, with `last_result`),
 * once from the screen alone (src/agents/opencode_screen.ts). A third pane
 * started by `up` with `agent = "opencode"` reports through the per-launch
 * plugin (OPENCODE_CONFIG_DIR untouched, the user's own plugin still runs).
 * The three start at once, so their start-ups overlap.
 */
import assert from "node:assert/strict";
import { ok, status, submit, waitScreen, waitStatus } from "./_agents.ts";
import { type AgentKit, processesUnder, runScenario, type Timings } from "./_agent_scenario.ts";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";
import { startMockOpenAi } from "./_mock_openai.ts";
import {
  ensureOpencode,
  isOpencodeIdle,
  opencodeCommand,
  type OpencodeEnv,
  prepareOpencodeEnv,
} from "./_opencode.ts";

const toml = (env: Record<string, string>) =>
  `{ ${Object.entries(env).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")} }`;

/** A plugin of the user's own: it must still run beside paneflow's per-launch one. */
const USER_PLUGIN = (log: string) =>
  `import { appendFileSync } from "node:fs";
export const Mine = async () => ({
  event: async ({ event }) => {
    if (event.type === "session.idle") appendFileSync(${JSON.stringify(log)}, "mine\\n");
  },
});
`;

function kitFor(host: TestHost, pane: string, hooked: boolean, env: OpencodeEnv, turns: () => string[]) {
  const kit: AgentKit = {
    family: "opencode",
    pane,
    hooked,
    root: env.root,
    projectDir: env.projectDir,
    turns: () => turns().length,
    prompts: turns,
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
      await waitScreen(host, pane, "esc again", (s) => /esc again to interrupt|· interrupted/.test(s), 3000)
        .catch(() => {});
      await ok(host, ["key", pane, "esc"]);
    },
  };
  return kit;
}

Deno.test("agents: opencode driven through paneflow, with its plugin, per launch and from the screen alone", async (t) => {
  const bin = await ensureOpencode();
  const mock = await startMockOpenAi();
  const timings: Timings = {};
  const envs: OpencodeEnv[] = [];
  const prepare = async () => {
    const env = await prepareOpencodeEnv({ baseUrl: mock.baseUrl, config: { permission: { bash: "ask" } } });
    envs.push(env);
    return env;
  };
  // One mock serves the three panes; they take turns one pane at a time.
  const prompts = () => mock.turns().map((r) => r.prompt ?? "");
  try {
    const [hooks, screen, launched] = [await prepare(), await prepare(), await prepare()];
    const userLog = `${launched.root}/user-plugin.log`;
    await Deno.mkdir(`${launched.home}/.config/opencode/plugins`, { recursive: true });
    await Deno.writeTextFile(`${launched.home}/.config/opencode/plugins/mine.js`, USER_PLUGIN(userLog));
    const config = JSON.stringify({ agents: { opencode: { command: opencodeCommand(bin) } } });
    await withHost({ config }, async (host) => {
      const out = await ok(host, ["hooks", "setup", "--agent", "opencode"], hooks.env);
      assert.match(out, /plugin installed/);
      const plugin = await Deno.readTextFile(`${hooks.home}/.config/opencode/plugins/paneflow.js`);
      assert.match(plugin, /^\/\/ paneflow-managed/);
      const st = JSON.parse(await ok(host, ["hooks", "status", "--agent", "opencode", "--json"], hooks.env));
      assert.equal(st.installed, true);
      for (const [pane, env] of [["oc-hooks", hooks], ["oc-screen", screen]] as const) {
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
      }
      const spec = `${host.dir}/opencode.toml`;
      await Deno.writeTextFile(
        spec,
        `name = "oc"\n\n[[panes]]\nname = "oc-up"\nagent = "opencode"\ncwd = ${
          JSON.stringify(launched.projectDir)
        }\nenv = ${toml(launched.env)}\n`,
      );
      const r = await host.cli(["up", spec, "--json"]);
      assert.equal(r.code, 0, r.stderr + r.stdout);

      await runScenario(host, kitFor(host, "oc-hooks", true, hooks, prompts), t, {
        submits: 10,
        timings,
      });

      await t.step("up: the per-launch plugin reports the turn", async () => {
        const launchFiles = () =>
          [...Deno.readDirSync(host.dir)].filter((e) => /^opencode-plugin-/.test(e.name));
        assert.equal(launchFiles().length, 1, "the per-launch plugin file");
        await waitStatus(
          host,
          "oc-up",
          "the agent idle",
          (s) => s.tool !== null && s.state === "idle",
          60_000,
        );
        const sent = await submit(host, "oc-up", "ECHO opencode via up");
        assert.equal(sent.status, "submitted", sent.evidence);
        const s = await waitStatus(
          host,
          "oc-up",
          "finished by the plugin",
          (s) => s.state === "finished" && s.hooked,
        );
        assert.equal(s.last_result, "opencode via up");
        const explain = await host.json<{ last_hook: { event: string | null } | null }>([
          "explain",
          "oc-up",
          "--json",
        ]);
        assert.equal(explain.last_hook?.event, "Stop");
        // A paste of 3+ lines shows as `[Pasted ~3 lines]` in opencode's input box; the whole text is sent.
        const text = "ECHO first line\nsecond line\nthird line";
        const multi = await submit(host, "oc-up", text);
        assert.equal(multi.status, "submitted", multi.evidence);
        await waitStatus(
          host,
          "oc-up",
          "the multi-line turn",
          (s) => s.state === "finished" && /third line/.test(s.last_result ?? ""),
        );
        // (opencode adds a space after a paste summary.)
        assert.equal(mock.turns().at(-1)?.prompt?.trimEnd(), text);
        await waitUntil("the user's own plugin ran", async () => {
          return (await Deno.readTextFile(userLog).catch(() => "")).includes("mine");
        }, { timeoutMs: 10_000 });
        await ok(host, ["close", "oc-up"]);
        await waitUntil(
          "no opencode process of the up pane",
          () => processesUnder(launched.root).length === 0,
          {
            timeoutMs: 5000,
          },
        );
        await waitUntil("the per-launch file removed", () => launchFiles().length === 0, { timeoutMs: 5000 });
      });

      await runScenario(host, kitFor(host, "oc-screen", false, screen, prompts), t, {
        submits: 5,
        timings,
      });
      for (const pane of ["oc-hooks", "oc-screen"]) {
        assert.equal(await status(host, pane).catch(() => null), null, `${pane} is closed`);
      }
    });
  } finally {
    await mock.close();
    for (const env of envs) await env.cleanup();
    console.log(JSON.stringify(timings));
  }
});
