/**
 * opencode, for real and offline (tests/_opencode.ts): its TUI in a pane,
 * against the Responses API mock, with every other destination closed.
 * paneflow has no hooks or screen rules for opencode yet, so what is checked
 * is what it does know: process detection (`tool: "opencode"`,
 * `unknown_running`, `reason: "no_hook"`), `send --submit` reporting
 * `unknown` (no evidence either way) while the turn does run (one turn at the
 * mock, the reply on screen), and no opencode process left after `close`.
 */
import assert from "node:assert/strict";
import { ok, waitScreen, waitStatus } from "./_agents.ts";
import { processesUnder } from "./_agent_scenario.ts";
import { waitUntil, withHost } from "./_harness.ts";
import { startMockOpenAi } from "./_mock_openai.ts";
import { ensureOpencode, opencodeCommand, prepareOpencodeEnv } from "./_opencode.ts";

Deno.test("agents: opencode runs offline in a pane, detected by process", async () => {
  const bin = await ensureOpencode();
  const mock = await startMockOpenAi();
  const env = await prepareOpencodeEnv({ baseUrl: mock.baseUrl });
  try {
    await withHost({}, async (host) => {
      await ok(host, [
        "new",
        "-c",
        opencodeCommand(bin),
        "--pane-name",
        "oc",
        "--cwd",
        env.projectDir,
        ...env.envArgs,
      ]);
      const s = await waitStatus(host, "oc", "opencode detected", (s) => s.tool === "opencode", 30_000);
      assert.equal(s.state, "unknown_running");
      assert.equal(s.reason, "no_hook");
      assert.equal(s.hooked, false);
      // The input box with the configured model: start-up is done.
      await waitScreen(
        host,
        "oc",
        "opencode's input",
        (t) => /Ask anything/.test(t) && /Mock OpenAI/.test(t),
        60_000,
      );
      const sent = JSON.parse(await ok(host, ["send", "oc", "ECHO opencode offline", "--submit", "--json"]));
      assert.equal(sent.status, "unknown", "no hooks and no screen rules: no evidence either way");
      const done = await waitScreen(
        host,
        "oc",
        "the reply and the turn's footer",
        (t) => /^ {5}opencode offline\b/m.test(t) && /▣ {2}Build · Mock · [\d.]+m?s/.test(t),
        60_000,
      );
      assert.match(done, /┃ {2}ECHO opencode offline/);
      assert.equal(mock.turns().length, 1);
      assert.equal(mock.turns()[0].prompt, "ECHO opencode offline");
      const after = await waitStatus(host, "oc", "still detected", (s) => s.tool === "opencode");
      assert.equal(after.state, "unknown_running");
      assert.ok(processesUnder(env.root).length > 0);
      await ok(host, ["close", "oc"]);
      await waitUntil("no opencode process left", () => processesUnder(env.root).length === 0, {
        timeoutMs: 5000,
      })
        .catch(() => {
          throw new Error(`left: ${JSON.stringify(processesUnder(env.root))}`);
        });
    });
  } finally {
    await mock.close();
    await env.cleanup();
  }
});
