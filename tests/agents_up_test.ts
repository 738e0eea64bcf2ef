/**
 * Launchers for Codex and Gemini CLI: a workspace spec with `agent = "codex"`
 * and `agent = "gemini"` panes (the launcher commands come from the config's
 * `agents.<name>.command`, the real CLIs from tests/_codex.ts and
 * tests/_gemini.ts) starts both, `send --submit` runs a turn in each, Codex
 * reports its turn through the per-launch `notify` hook, Gemini through the
 * per-launch hooks of its system-defaults file (`GEMINI_CLI_SYSTEM_DEFAULTS_PATH`,
 * merged with the user's own hooks, the user's settings.json untouched), and
 * closing the panes leaves no process of either agent and no per-launch file.
 */
import assert from "node:assert/strict";
import { ok, waitStatus } from "./_agents.ts";
import { processesUnder } from "./_agent_scenario.ts";
import { codexCommand, ensureCodex, prepareCodexEnv } from "./_codex.ts";
import { ensureGemini, geminiCommand, prepareGeminiEnv } from "./_gemini.ts";
import { waitUntil, withHost } from "./_harness.ts";
import { startMockGemini } from "./_mock_gemini.ts";
import { startMockOpenAi } from "./_mock_openai.ts";

const toml = (env: Record<string, string>) =>
  `{ ${Object.entries(env).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(", ")} }`;

const root = Deno.uid() === 0;

Deno.test('agents: up with agent = "codex" and agent = "gemini" panes', async () => {
  const [bin, js] = await Promise.all([ensureCodex(), ensureGemini()]);
  const openai = await startMockOpenAi();
  const gemini = await startMockGemini();
  const cx = await prepareCodexEnv({ baseUrl: openai.baseUrl });
  const gm = await prepareGeminiEnv({ url: gemini.url });
  // The user's own hook, which must still run beside paneflow's per-launch ones.
  const userHookLog = `${gm.root}/user-hook.log`;
  const userSettings = JSON.parse(await Deno.readTextFile(`${gm.geminiDir}/settings.json`));
  userSettings.hooks = {
    AfterAgent: [{
      matcher: "*",
      hooks: [{ type: "command", name: "mine", command: `echo mine >> ${userHookLog}`, timeout: 10_000 }],
    }],
  };
  const userText = JSON.stringify(userSettings, null, 2);
  await Deno.writeTextFile(`${gm.geminiDir}/settings.json`, userText);
  // Gemini reads a system-defaults file only from root-owned directories nobody else can write:
  // the host's socket dir (under /tmp) is not one, so the file goes to its cache dir.
  const cache = `${gm.root}/cache`;
  const launchDir = `${cache}/paneflow/launch`;
  const config = JSON.stringify({
    agents: { codex: { command: codexCommand(bin) }, gemini: { command: geminiCommand(js) } },
  });
  try {
    await withHost({ config, env: { XDG_CACHE_HOME: cache } }, async (host) => {
      const spec = `${host.dir}/agents.toml`;
      await Deno.writeTextFile(
        spec,
        `name = "agents"

[[panes]]
name = "cx"
agent = "codex"
cwd = ${JSON.stringify(cx.projectDir)}
env = ${toml(cx.env)}

[[panes]]
name = "gm"
agent = "gemini"
cwd = ${JSON.stringify(gm.projectDir)}
env = ${toml(gm.env)}
`,
      );
      const r = await host.cli(["up", spec, "--json"]);
      assert.equal(r.code, 0, r.stderr + r.stdout);
      for (const [pane, text] of [["cx", "ECHO codex via up"], ["gm", "ECHO gemini via up"]]) {
        await waitStatus(host, pane, "the agent idle", (s) => s.tool !== null && s.state === "idle", 40_000);
        const sent = JSON.parse(await ok(host, ["send", pane, text, "--submit", "--json"]));
        // Gemini CLI can still be loading its config when its input box is drawn: the prompt is then
        // queued (and runs once it has loaded), which is what the hooks below must report.
        assert.ok(["submitted", "queued"].includes(sent.status), `${sent.status}: ${sent.evidence}`);
      }
      // Codex: the per-launch notify reports the finished turn with its text.
      const c = await waitStatus(
        host,
        "cx",
        "codex finished",
        (s) => s.state === "finished" && s.hooked,
        40_000,
      );
      assert.equal(c.tool, "codex");
      assert.equal(c.last_result, "codex via up");
      // Gemini: the per-launch AfterAgent hook reports the finished turn with its text (as root only).
      const g = await waitStatus(
        host,
        "gm",
        "gemini finished",
        (s) => s.state === "finished" && (s.hooked || !root),
        40_000,
      );
      assert.equal(g.tool, "gemini");
      if (root) {
        assert.equal(g.last_result, "gemini via up");
        const explain = await host.json<{ last_hook: { event: string | null } | null }>([
          "explain",
          "gm",
          "--json",
        ]);
        assert.equal(explain.last_hook?.event, "AfterAgent", JSON.stringify(explain));
        assert.equal([...Deno.readDirSync(launchDir)].length, 1, "the per-launch file exists");
      }
      await waitUntil("the user's own AfterAgent hook ran", async () => {
        return (await Deno.readTextFile(userHookLog).catch(() => "")).includes("mine");
      }, { timeoutMs: 10_000 });
      assert.equal(
        await Deno.readTextFile(`${gm.geminiDir}/settings.json`),
        userText,
        "settings.json untouched",
      );
      assert.equal(openai.turns().length, 1);
      assert.equal(gemini.turns().length, 1);
      assert.ok(processesUnder(cx.root).length > 0 && processesUnder(gm.root).length > 0);
      await ok(host, ["close", "cx"]);
      await ok(host, ["close", "gm"]);
      await waitUntil(
        "no Codex or Gemini process left",
        () => processesUnder(cx.root).length + processesUnder(gm.root).length === 0,
        { timeoutMs: 5000 },
      ).catch(() => {
        throw new Error(`left: ${JSON.stringify([...processesUnder(cx.root), ...processesUnder(gm.root)])}`);
      });
      if (root) {
        await waitUntil("the per-launch file removed", async () => {
          for await (const _ of Deno.readDir(launchDir)) return false;
          return true;
        }, { timeoutMs: 5000 });
      }
    });
  } finally {
    await openai.close();
    await gemini.close();
    await cx.cleanup();
    await gm.cleanup();
  }
});
