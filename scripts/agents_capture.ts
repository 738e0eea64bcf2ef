/**
 * Captures the screen fixtures in tests/fixtures/codex/ and
 * tests/fixtures/gemini/ and tests/fixtures/opencode/ from the real Codex CLI,
 * Gemini CLI and opencode (tests/_codex.ts, tests/_gemini.ts, tests/_opencode.ts) in panes of a real host, against the mocks, driven only by
 * paneflow's CLI verbs (`send`, `key`, `read --raw`).
 *
 *   deno run -A scripts/agents_capture.ts [codex|gemini|gemini-plain|opencode ...] [--out dir]
 *
 * Not a test (it writes files); re-run it when a pinned version changes and
 * review the diff.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { saver, type } from "./_capture.ts";
import { ok, screen, waitScreen } from "../tests/_agents.ts";
import { codexCommand, ensureCodex, isCodexIdle, prepareCodexEnv } from "../tests/_codex.ts";
import { ensureGemini, geminiCommand, isGeminiIdle, prepareGeminiEnv } from "../tests/_gemini.ts";
import { startHost, type TestHost, waitUntil } from "../tests/_harness.ts";
import { startMockGemini } from "../tests/_mock_gemini.ts";
import { startMockOpenAi } from "../tests/_mock_openai.ts";
import { ensureOpencode, isOpencodeIdle, opencodeCommand, prepareOpencodeEnv } from "../tests/_opencode.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: { out: { type: "string" } },
  allowPositionals: true,
});
const which = new Set(positionals.length ? positionals : ["codex", "gemini", "gemini-plain", "opencode"]);
const FIXTURES = values.out ?? new URL("../tests/fixtures", import.meta.url).pathname;

const save = saver(FIXTURES);

async function codex(host: TestHost) {
  const bin = await ensureCodex();
  const mock = await startMockOpenAi();
  const env = await prepareCodexEnv({ baseUrl: mock.baseUrl });
  const P = "cx";
  const D = "codex";
  const turns = () => mock.turns().length;
  try {
    await ok(host, [
      "new",
      "-c",
      codexCommand(bin),
      "--pane-name",
      P,
      "--cwd",
      env.projectDir,
      ...env.envArgs,
    ]);
    await save(D, "idle_startup", await waitScreen(host, P, "codex idle", isCodexIdle, 30_000));
    await ok(host, ["send", P, "draft text that is not submitted"]);
    await save(
      D,
      "composer_text",
      await waitScreen(host, P, "draft", (s) => s.includes("› draft text"), 5000),
    );
    await ok(host, ["key", P, "ctrl-u"]);
    await waitScreen(host, P, "draft gone", (s) => !s.includes("› draft text"), 5000);

    await type(host, P, "ECHO hello from codex", turns);
    await save(
      D,
      "finished",
      await waitScreen(host, P, "reply", (s) => /Worked for/.test(s) && isCodexIdle(s)),
    );

    await type(host, P, "HOLD", turns);
    await save(D, "busy", await waitScreen(host, P, "busy", (s) => s.includes("esc to interrupt")));
    await ok(host, ["send", P, "a draft typed while busy"]);
    await save(
      D,
      "busy_draft",
      await waitScreen(host, P, "draft", (s) => s.includes("a draft typed while"), 5000),
    );
    await ok(host, ["key", P, "ctrl-u"]);
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      "interrupted",
      await waitScreen(host, P, "interrupted", (s) => /Conversation interrupted/.test(s)),
    );

    await type(host, P, "RUN! echo hi > f.txt", turns);
    await save(
      D,
      "permission_exec",
      await waitScreen(host, P, "dialog", (s) => /Would you like to run/.test(s)),
    );
    await ok(host, ["key", P, "1"]);
    await save(
      D,
      "permission_approved",
      await waitScreen(host, P, "approved", (s) => /DONE:/.test(s) && isCodexIdle(s)),
    );

    await type(host, P, "RUN! echo nope > n.txt", turns);
    await waitScreen(host, P, "dialog", (s) => /Would you like to run[\s\S]*nope/.test(s));
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      "permission_refused",
      await waitScreen(host, P, "refused", (s) => /You canceled the request/.test(s) && isCodexIdle(s)),
    );

    await type(host, P, "FAIL 400", turns);
    await save(
      D,
      "api_error_400",
      await waitScreen(host, P, "error", (s) => /mock failure 400/.test(s) && isCodexIdle(s)),
    );
    await type(host, P, "FAIL 500", turns);
    await save(
      D,
      "api_error_500",
      await waitScreen(host, P, "error", (s) => /high demand/.test(s) && isCodexIdle(s)),
    );

    await type(host, P, "SLOW 3000 CHUNKS 4 streaming reply in chunks", turns);
    await save(D, "busy_waiting", await waitScreen(host, P, "busy", (s) => s.includes("esc to interrupt")));
    await waitScreen(host, P, "reply", (s) => s.includes("streaming reply in chunks") && isCodexIdle(s));

    await ok(host, ["key", P, "ctrl-c"]);
    await save(D, "exited", await waitScreen(host, P, "exit", (s) => /codex resume/.test(s), 10_000));
  } finally {
    await ok(host, ["close", P]).catch(() => {});
    await mock.close();
    await env.cleanup();
  }
  // The hooks-review dialog Codex shows for new, untrusted hooks.
  const mock2 = await startMockOpenAi();
  const env2 = await prepareCodexEnv({ baseUrl: mock2.baseUrl });
  try {
    await Deno.writeTextFile(
      `${env2.codexHome}/hooks.json`,
      JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command: "true", timeout: 10 }] }] } }),
    );
    await ok(host, [
      "new",
      "-c",
      codexCommand(bin),
      "--pane-name",
      "cx2",
      "--cwd",
      env2.projectDir,
      ...env2.envArgs,
    ]);
    await save(
      D,
      "hooks_review",
      await waitScreen(host, "cx2", "review", (s) => /Hooks need review/.test(s), 30_000),
    );
  } finally {
    await ok(host, ["close", "cx2"]).catch(() => {});
    await mock2.close();
    await env2.cleanup();
  }
}

async function gemini(host: TestHost, truecolor: boolean) {
  const js = await ensureGemini();
  const mock = await startMockGemini();
  const env = await prepareGeminiEnv({ url: mock.url, truecolor });
  const P = truecolor ? "gm" : "gmp";
  const D = "gemini";
  const sfx = truecolor ? "" : "_plain";
  const turns = () => mock.turns().length;
  try {
    await ok(host, [
      "new",
      "-c",
      geminiCommand(js),
      "--pane-name",
      P,
      "--cwd",
      env.projectDir,
      ...env.envArgs,
    ]);
    await save(D, `idle_startup${sfx}`, await waitScreen(host, P, "gemini idle", isGeminiIdle, 40_000));
    await ok(host, ["send", P, "draft text that is not submitted"]);
    await save(
      D,
      `composer_text${sfx}`,
      await waitScreen(host, P, "draft", (s) => s.includes("> draft text"), 5000),
    );
    await ok(host, ["key", P, "ctrl-u"]);
    await waitScreen(host, P, "draft gone", (s) => !s.includes("> draft text"), 5000);

    await type(host, P, "ECHO hello from gemini", turns);
    await save(
      D,
      `finished${sfx}`,
      await waitScreen(host, P, "reply", (s) => /✦ hello from gemini/.test(s) && isGeminiIdle(s)),
    );

    await type(host, P, "HOLD", turns);
    await save(D, `busy${sfx}`, await waitScreen(host, P, "busy", (s) => s.includes("esc to cancel")));
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      `interrupted${sfx}`,
      await waitScreen(host, P, "cancelled", (s) => /Request cancelled/.test(s) && isGeminiIdle(s)),
    );

    await type(host, P, "RUN echo hi > f.txt", turns);
    await save(
      D,
      `permission_shell${sfx}`,
      await waitScreen(host, P, "dialog", (s) => /Allow execution of/.test(s)),
    );
    await ok(host, ["key", P, "1"]);
    await save(
      D,
      `permission_approved${sfx}`,
      await waitScreen(host, P, "approved", (s) => /DONE:/.test(s) && isGeminiIdle(s)),
    );

    await type(host, P, "RUN echo nope > n.txt", turns);
    await waitScreen(host, P, "dialog", (s) => /Allow execution of/.test(s) && s.includes("nope"));
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      `permission_refused${sfx}`,
      await waitScreen(host, P, "refused", (s) => !/Allow execution of/.test(s) && isGeminiIdle(s)),
    );

    await type(host, P, "FAIL 400", turns);
    await save(
      D,
      `api_error_400${sfx}`,
      await waitScreen(host, P, "error", (s) => /mock failure 400/.test(s) && isGeminiIdle(s)),
    );

    await type(host, P, "CHUNKS 3 twochunks12", turns);
    await save(
      D,
      `finished_chunks${sfx}`,
      await waitScreen(host, P, "reply", (s) => /twochunks12/.test(s) && isGeminiIdle(s)),
    );

    await ok(host, ["key", P, "ctrl-c"]);
    await new Promise((r) => setTimeout(r, 300));
    await save(D, `exit_prompt${sfx}`, await screen(host, P));
    await ok(host, ["key", P, "ctrl-c"]);
    await save(
      D,
      `exited${sfx}`,
      await waitScreen(host, P, "exit", (s) => /gemini --resume|Wall Time/.test(s), 10_000),
    );
  } finally {
    await ok(host, ["close", P]).catch(() => {});
    await mock.close();
    await env.cleanup();
  }
}

async function opencode(host: TestHost) {
  const bin = await ensureOpencode();
  const mock = await startMockOpenAi();
  // Shell commands behind a permission dialog (opencode's default is to allow them).
  const env = await prepareOpencodeEnv({ baseUrl: mock.baseUrl, config: { permission: { bash: "ask" } } });
  const P = "oc";
  const D = "opencode";
  const turns = () => mock.turns().length;
  try {
    await ok(host, [
      "new",
      "-c",
      opencodeCommand(bin),
      "--pane-name",
      P,
      "--cwd",
      env.projectDir,
      ...env.envArgs,
    ]);
    await save(
      D,
      "idle_startup",
      await waitScreen(host, P, "opencode idle", (s) => isOpencodeIdle(s) && /Mock OpenAI/.test(s), 60_000),
    );
    // Keys typed while the TUI still loads can be lost: type until the draft shows.
    await waitUntil("the draft in the input", async () => {
      await ok(host, ["key", P, "ctrl-u"]);
      await ok(host, ["send", P, "draft text that is not submitted"]);
      await new Promise((r) => setTimeout(r, 300));
      return (await screen(host, P)).includes("draft text that is not");
    }, { timeoutMs: 20_000 });
    await save(D, "composer_text", await screen(host, P));
    await ok(host, ["key", P, "ctrl-u"]);
    await waitScreen(host, P, "draft gone", (s) => !s.includes("draft text that"), 5000);

    await type(host, P, "ECHO hello from opencode", turns);
    await save(
      D,
      "finished",
      await waitScreen(
        host,
        P,
        "reply",
        (s) => /^ {5}hello from opencode/m.test(s) && /▣ .*· [\d.]+m?s/.test(s) && isOpencodeIdle(s),
      ),
    );
    await ok(host, ["send", P, "draft after a turn"]);
    await save(
      D,
      "composer_session",
      await waitScreen(host, P, "draft", (s) => s.includes("draft after a turn"), 5000),
    );
    await ok(host, ["key", P, "ctrl-u"]);
    await waitScreen(host, P, "draft gone", (s) => !s.includes("draft after a turn"), 5000);

    await type(host, P, "HOLD", turns);
    await save(D, "busy", await waitScreen(host, P, "busy", (s) => /esc interrupt/.test(s)));
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      "busy_esc_once",
      await waitScreen(host, P, "esc again", (s) => /esc again to interrupt/.test(s)),
    );
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      "interrupted",
      await waitScreen(host, P, "interrupted", (s) => /▣ .*· interrupted/.test(s) && isOpencodeIdle(s)),
    );

    await type(host, P, "RUN echo hi > f.txt", turns);
    await save(
      D,
      "permission_shell",
      await waitScreen(host, P, "dialog", (s) => /Permission required/.test(s)),
    );
    await ok(host, ["send", P, "\r"]);
    await save(
      D,
      "permission_approved",
      await waitScreen(host, P, "approved", (s) => /DONE:/.test(s) && isOpencodeIdle(s)),
    );

    await type(host, P, "RUN echo nope > n.txt", turns);
    await waitScreen(host, P, "dialog", (s) => /Permission required[\s\S]*nope/.test(s));
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      "permission_refused",
      await waitScreen(host, P, "refused", (s) => !/Permission required/.test(s) && isOpencodeIdle(s)),
    );

    await type(host, P, "FAIL 400", turns);
    await save(
      D,
      "api_error_400",
      await waitScreen(host, P, "error", (s) => /mock failure 400/.test(s) && isOpencodeIdle(s)),
    );

    await ok(host, ["key", P, "ctrl-c"]);
    await save(D, "exited", await waitScreen(host, P, "exit", (s) => /opencode -s ses_/.test(s), 10_000));
  } finally {
    await ok(host, ["close", P]).catch(() => {});
    await mock.close();
    await env.cleanup();
  }
}

const host = await startHost();
try {
  if (which.has("codex")) await codex(host);
  if (which.has("gemini")) await gemini(host, true);
  if (which.has("gemini-plain")) await gemini(host, false);
  if (which.has("opencode")) await opencode(host);
} finally {
  await host.stop();
}
