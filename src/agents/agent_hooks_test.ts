import assert from "node:assert/strict";
import { codexNotify, hookSpecs, withCodexNotify, withoutCodexNotify } from "./agent_hooks.ts";
import { hookStatus, installHooks, removeHooks } from "./claude_settings.ts";
import { hookFrame, lastAssistantText } from "./hook.ts";

const ARGV = ["paneflow", "ai-hook", "--tool", "codex", "codex-notify"];

Deno.test("Codex notify: added at the top, updated, removed; the user's own is kept", () => {
  const toml = 'model = "x"\n\n[features]\ndaemon_auto_start = false\n';
  const added = withCodexNotify(toml, ARGV);
  assert.ok(added.changed);
  assert.match(
    added.text,
    /^notify = \["paneflow","ai-hook","--tool","codex","codex-notify"\] # paneflow-managed\n/,
  );
  assert.equal(codexNotify(added.text)?.ours, true);
  assert.equal(withCodexNotify(added.text, ARGV).changed, false, "idempotent");
  assert.deepEqual(withoutCodexNotify(added.text), { text: toml, changed: true });
  const users = 'notify = ["/usr/bin/my-notifier"]\n' + toml;
  assert.deepEqual(withCodexNotify(users, ARGV), { text: users, changed: false, kept: true });
  assert.equal(withoutCodexNotify(users).changed, false);
  // A `notify` key inside a table is not Codex's top-level notify.
  const inTable = "[tui]\nnotify = true\n";
  assert.equal(codexNotify(inTable), null);
});

Deno.test("hook specs honour CODEX_HOME and GEMINI_CLI_HOME; Gemini groups carry a matcher, a name and ms", () => {
  const specs = hookSpecs({ HOME: "/h", CODEX_HOME: "/c", GEMINI_CLI_HOME: "/g" });
  assert.equal(specs.codex.file, "/c/hooks.json");
  assert.equal(specs.codex.notifyFile, "/c/config.toml");
  assert.equal(specs.gemini.file, "/g/.gemini/settings.json");
  assert.equal(specs.claude.file, "/h/.claude/settings.json");
  const user = { hooks: { AfterAgent: [{ matcher: "*", hooks: [{ type: "command", command: "mine" }] }] } };
  const { settings } = installHooks(user, (e) => `pf ${e}`, specs.gemini.events, specs.gemini.group);
  const after = (settings.hooks as Record<string, unknown[]>).AfterAgent;
  assert.equal(after.length, 2, "the user's hook is kept");
  assert.deepEqual(after[1], {
    matcher: "*",
    hooks: [{
      type: "command",
      name: "paneflow-AfterAgent",
      command: "pf AfterAgent # paneflow-managed",
      timeout: 10_000,
    }],
  });
  assert.ok(hookStatus(settings, specs.gemini.events).every((s) => s.command));
  assert.deepEqual(removeHooks(settings).settings, user);
});

Deno.test("Codex and Gemini payloads map to ai.* frames", () => {
  const ctx = { surfaceId: 3, tool: "codex" };
  const title = {
    type: "agent-turn-complete",
    "thread-id": "t2",
    "input-messages": ["Generate a concise, single-line task title for …"],
    "last-assistant-message": '{"title":"x"}',
  };
  assert.equal(hookFrame("codex-notify", title, ctx), null, "the title side-thread is dropped");
  const turn = {
    type: "agent-turn-complete",
    "thread-id": "t1",
    "input-messages": ["hi"],
    "last-assistant-message": "yo",
  };
  assert.deepEqual(hookFrame("codex-notify", turn, ctx)?.params, {
    surface_id: 3,
    tool: "codex",
    event: "codex-notify",
    session_id: "t1",
    last_result: "yo",
  });
  const perm = {
    session_id: "s",
    tool_name: "Bash",
    tool_input: { command: "echo hi > f.txt", description: "d" },
  };
  assert.equal(hookFrame("PermissionRequest", perm, ctx)?.params.message, "Bash: echo hi > f.txt");

  const g = { surfaceId: 4, tool: "gemini" };
  assert.equal(hookFrame("BeforeAgent", { prompt: "RUN x" }, g)?.method, "ai.prompt_submit");
  assert.equal(hookFrame("BeforeTool", { tool_name: "run_shell_command" }, g)?.params.phase, "pre");
  const note = hookFrame("Notification", {
    notification_type: "ToolPermission",
    message: "Tool Confirm Shell Command requires execution",
    details: { type: "exec", title: "Confirm Shell Command", command: "echo hi > f.txt" },
  }, g)!;
  assert.equal(note.params.notification_type, "permission_prompt");
  assert.equal(note.params.message, "Confirm Shell Command: echo hi > f.txt");
  assert.equal(
    hookFrame("AfterAgent", { prompt_response: "[no response text]" }, g)?.params.last_result,
    undefined,
  );
  assert.equal(hookFrame("AfterAgent", { prompt_response: "abc" }, g)?.params.last_result, "abc");
});

Deno.test("the reply in Gemini CLI's chat log, and nothing before this turn's reply is written", () => {
  const log = [
    '{"sessionId":"s","kind":"main"}',
    '{"id":"1","type":"user","content":[{"text":"ECHO one"}]}',
    '{"id":"2","type":"gemini","content":"one"}',
    '{"$set":{"lastUpdated":"x"}}',
    '{"id":"3","type":"user","content":[{"text":"CHUNKS 3 twochunks12"}]}',
  ];
  assert.equal(lastAssistantText(log.join("\n")), undefined, "the new turn's reply is not logged yet");
  log.push('{"id":"4","type":"gemini","content":"twochunks12","thoughts":[]}');
  assert.equal(lastAssistantText(log.join("\n")), "twochunks12");
});

Deno.test("Qwen Code: Claude Code's hooks in ~/.qwen/settings.json; its two quirks", () => {
  const spec = hookSpecs({ HOME: "/h" }).qwen;
  assert.equal(spec.file, "/h/.qwen/settings.json");
  assert.deepEqual(spec.group("Stop", "cmd"), {
    matcher: "*",
    hooks: [{ type: "command", command: "cmd", timeout: 10 }],
  });
  const ctx = { surfaceId: 3, tool: "qwen" };
  // The payloads Qwen Code 0.24.4 sent (docs/agents.md, Qwen Code).
  const request = hookFrame("PermissionRequest", {
    session_id: "s",
    tool_name: "run_shell_command",
    tool_input: { command: "echo ok > f.txt", description: "d" },
  }, ctx);
  assert.equal(request?.params.message, "run_shell_command: echo ok > f.txt");
  const note = hookFrame("Notification", {
    notification_type: "permission_prompt",
    message: "Qwen Code needs your permission to use run_shell_command",
  }, ctx);
  assert.equal(note?.method, "ai.notification");
  assert.equal(note?.params.notification_type, "permission_prompt");
  assert.equal(note?.params.message, undefined, "the request's message, with the command, is kept");
  const again = hookFrame("UserPromptSubmit", { session_id: "s", prompt: "" }, ctx);
  assert.equal(again?.method, "ai.tool_use", "the continuation after a tool is not a new turn");
  assert.equal(hookFrame("UserPromptSubmit", { prompt: "hi" }, ctx)?.method, "ai.prompt_submit");
  // Claude Code's own empty prompt is still a prompt.
  assert.equal(hookFrame("UserPromptSubmit", { prompt: "" }, { surfaceId: 3 })?.method, "ai.prompt_submit");
});
