/**
 * Captures the screen fixtures in tests/fixtures/qwen/ and
 * tests/fixtures/copilot/ from the real Qwen Code and GitHub Copilot CLI
 * (tests/_qwen.ts, tests/_copilot.ts) in panes of a real host, against the
 * Chat Completions mock (tests/_mock_chat.ts), driven only by paneflow's CLI
 * verbs (`send`, `key`, `read --raw`). The other agents' fixtures come from
 * scripts/agents_capture.ts.
 *
 *   deno run -A scripts/agents_capture_more.ts [qwen|copilot ...] [--out dir]
 *
 * Not a test (it writes files); re-run it when a pinned version changes and
 * review the diff.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { saver, type } from "./_capture.ts";
import { ok, waitScreen } from "../tests/_agents.ts";
import { startHost, type TestHost } from "../tests/_harness.ts";
import { startMockChat } from "../tests/_mock_chat.ts";
import { ensureQwen, isQwenIdle, prepareQwenEnv, qwenCommand } from "../tests/_qwen.ts";
import { copilotCommand, ensureCopilot, isCopilotIdle, prepareCopilotEnv } from "../tests/_copilot.ts";

const { values, positionals } = parseArgs({
  args: Deno.args,
  options: { out: { type: "string" } },
  allowPositionals: true,
});
const which = new Set(positionals.length ? positionals : ["qwen", "copilot"]);
const FIXTURES = values.out ?? new URL("../tests/fixtures", import.meta.url).pathname;

const save = saver(FIXTURES);

async function qwen(host: TestHost) {
  const bin = await ensureQwen();
  const mock = await startMockChat();
  const env = await prepareQwenEnv({ baseUrl: mock.baseUrl });
  const P = "qw";
  const D = "qwen";
  const turns = () => mock.turns().length;
  const idle = isQwenIdle;
  try {
    await ok(host, [
      "new",
      "-c",
      qwenCommand(bin),
      "--pane-name",
      P,
      "--cwd",
      env.projectDir,
      ...env.envArgs,
    ]);
    await save(D, "idle_startup", await waitScreen(host, P, "qwen idle", idle, 40_000));
    await ok(host, ["send", P, "draft text that is not submitted"]);
    await save(
      D,
      "composer_text",
      await waitScreen(host, P, "draft", (s) => s.includes("> draft text"), 5000),
    );
    await ok(host, ["key", P, "ctrl-c"]);
    await waitScreen(host, P, "draft gone", (s) => !s.includes("> draft text"), 5000);

    await type(host, P, "ECHO hello from qwen", turns);
    await save(
      D,
      "finished",
      await waitScreen(host, P, "reply", (s) => /◆︎? ?hello from qwen/.test(s) && idle(s)),
    );

    await type(host, P, "HOLD", turns);
    await save(D, "busy", await waitScreen(host, P, "busy", (s) => s.includes("esc to cancel")));
    await ok(host, ["key", P, "esc"]);
    await save(D, "interrupted", await waitScreen(host, P, "cancelled", (s) => !s.includes("esc to cancel")));
    await ok(host, ["key", P, "ctrl-c"]);
    await waitScreen(host, P, "input cleared", idle, 5000);

    await type(host, P, "RUN echo hi > f.txt", turns);
    await save(
      D,
      "permission_shell",
      await waitScreen(host, P, "dialog", (s) => /Allow execution of/.test(s)),
    );
    await ok(host, ["key", P, "1"]);
    await save(
      D,
      "permission_approved",
      await waitScreen(host, P, "approved", (s) => /DONE:/.test(s) && idle(s)),
    );

    await type(host, P, "RUN echo nope > n.txt", turns);
    await waitScreen(host, P, "dialog", (s) => /Allow execution of/.test(s) && s.includes("nope"));
    await ok(host, ["key", P, "esc"]);
    await save(
      D,
      "permission_refused",
      await waitScreen(host, P, "refused", (s) => !/Allow execution of/.test(s) && idle(s)),
    );

    await type(host, P, "FAIL 400", turns);
    await save(
      D,
      "api_error_400",
      await waitScreen(host, P, "error", (s) => /mock failure 400/.test(s) && idle(s)),
    );

    await ok(host, ["key", P, "ctrl-c"]);
    await save(
      D,
      "exit_prompt",
      await waitScreen(host, P, "exit prompt", (s) => /again to exit/.test(s), 5000),
    );
    await ok(host, ["key", P, "ctrl-c"]);
    await save(D, "exited", await waitScreen(host, P, "exit", (s) => /qwen --resume/.test(s), 10_000));
  } finally {
    await ok(host, ["close", P]).catch(() => {});
    await mock.close();
    await env.cleanup();
  }
}

async function copilot(host: TestHost) {
  const bin = await ensureCopilot();
  const mock = await startMockChat();
  const env = await prepareCopilotEnv({ baseUrl: mock.baseUrl });
  const P = "cp";
  const D = "copilot";
  const turns = () => mock.turns().length;
  const idle = isCopilotIdle;
  try {
    await ok(host, [
      "new",
      "-c",
      copilotCommand(bin),
      "--pane-name",
      P,
      "--cwd",
      env.projectDir,
      ...env.envArgs,
    ]);
    await save(D, "idle_startup", await waitScreen(host, P, "copilot idle", idle, 60_000));
    await ok(host, ["send", P, "draft text that is not submitted"]);
    await save(
      D,
      "composer_text",
      await waitScreen(host, P, "draft", (s) => s.includes("❯ draft text"), 5000),
    );
    await ok(host, ["key", P, "ctrl-c"]);
    await waitScreen(host, P, "draft gone", (s) => !s.includes("❯ draft text"), 5000);

    await type(host, P, "ECHO hello from copilot", turns);
    await save(
      D,
      "finished",
      await waitScreen(host, P, "reply", (s) => /● hello from copilot/.test(s) && idle(s)),
    );

    await type(host, P, "HOLD", turns);
    await save(D, "busy", await waitScreen(host, P, "busy", (s) => s.includes("Working")));
    await ok(host, ["key", P, "ctrl-c"]);
    await save(
      D,
      "interrupted",
      await waitScreen(host, P, "cancelled", (s) => /cancelled by user/.test(s) && idle(s)),
    );

    await type(host, P, "RUN echo hi > f.txt", turns);
    await save(
      D,
      "permission_shell",
      await waitScreen(host, P, "dialog", (s) => /Do you want to run this command\?/.test(s)),
    );
    await ok(host, ["key", P, "1"]);
    await save(
      D,
      "permission_approved",
      await waitScreen(host, P, "approved", (s) => /DONE:/.test(s) && idle(s)),
    );

    await type(host, P, "FAIL 400", turns);
    await save(
      D,
      "api_error_400",
      await waitScreen(host, P, "error", (s) => /mock failure 400/.test(s) && idle(s)),
    );

    await ok(host, ["key", P, "ctrl-c"]);
    await save(
      D,
      "exit_prompt",
      await waitScreen(host, P, "exit prompt", (s) => /again to exit/.test(s), 5000),
    );
    await ok(host, ["key", P, "ctrl-c"]);
    await save(D, "exited", await waitScreen(host, P, "exit", (s) => /copilot --resume/.test(s), 10_000));
  } finally {
    await ok(host, ["close", P]).catch(() => {});
    await mock.close();
    await env.cleanup();
  }
}

const host = await startHost();
try {
  if (which.has("qwen")) await qwen(host);
  if (which.has("copilot")) await copilot(host);
} finally {
  await host.stop();
}
