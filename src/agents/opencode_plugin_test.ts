import assert from "node:assert/strict";
import {
  isPaneflowPlugin,
  opencodeConfigDir,
  opencodePluginFile,
  opencodePluginSource,
} from "./opencode_plugin.ts";

Deno.test("opencode's config dir: OPENCODE_CONFIG_DIR, else XDG_CONFIG_HOME, else ~/.config", () => {
  assert.equal(opencodeConfigDir({ HOME: "/h" }), "/h/.config/opencode");
  assert.equal(opencodeConfigDir({ HOME: "/h", XDG_CONFIG_HOME: "/x" }), "/x/opencode");
  assert.equal(opencodeConfigDir({ HOME: "/h", XDG_CONFIG_HOME: "/x", OPENCODE_CONFIG_DIR: "/o" }), "/o");
  assert.equal(opencodePluginFile({ HOME: "/h" }), "/h/.config/opencode/plugins/paneflow.js");
  assert.ok(isPaneflowPlugin(opencodePluginSource(["paneflow"])));
  assert.ok(!isPaneflowPlugin("export const Mine = async () => ({});\n// paneflow-managed"));
});

/**
 * The generated plugin, loaded as opencode loads it, fed opencode 1.18's
 * hook calls and bus events (as captured from the real opencode): the ai-hook
 * events it runs, in order, with their payloads. `paneflow` is replaced by a
 * shell that records each call.
 */
Deno.test("the opencode plugin maps opencode's events to ai-hook events, in order", async () => {
  const dir = await Deno.makeTempDir({ prefix: "pf-ocplugin-" });
  const out = `${dir}/calls`;
  await Deno.mkdir(out);
  // `sh -c <script> ai-hook --tool opencode <Event>`: $3 is the event; the payload is on stdin.
  const script = `n=$(ls "${out}" | wc -l); cat > "${out}/$(printf %03d "$n")-$3.json"`;
  const file = `${dir}/plugin.js`;
  await Deno.writeTextFile(file, opencodePluginSource(["/bin/sh", "-c", script]));
  const previous = Deno.env.get("PANEFLOW_SURFACE_ID");
  Deno.env.set("PANEFLOW_SURFACE_ID", "7");
  try {
    const mod = await import(new URL(`file://${file}`).href);
    const hooks = await mod.PaneflowPlugin({ directory: dir });
    const ev = (type: string, properties: Record<string, unknown>) =>
      hooks.event({ event: { type, properties } });
    const S = "ses_1";
    const prompt = (text: string) =>
      hooks["chat.message"]({ sessionID: S }, { message: { role: "user" }, parts: [{ type: "text", text }] });
    const reply = (id: string, text: string) =>
      ev("message.updated", { info: { id, role: "assistant" } })
        .then(() =>
          ev("message.part.updated", { part: { type: "text", text, messageID: id, sessionID: S } })
        );

    // A turn with a shell command behind a permission dialog, approved.
    await ev("session.created", { info: { id: S } });
    await prompt("RUN echo hi > f.txt");
    await hooks["tool.execute.before"]({ tool: "bash", sessionID: S }, {
      args: { command: "echo hi > f.txt" },
    });
    await ev("permission.asked", {
      sessionID: S,
      permission: "bash",
      patterns: ["echo hi > f.txt"],
      metadata: { command: "echo hi > f.txt" },
    });
    await ev("permission.replied", { sessionID: S, reply: "once" });
    await hooks["tool.execute.after"](
      { tool: "bash", sessionID: S, args: { command: "echo hi > f.txt" } },
      {},
    );
    await reply("msg_a", "DONE: (no output)");
    await ev("session.idle", { sessionID: S });
    await ev("session.idle", { sessionID: S }); // opencode sends it twice: one Stop
    // An interrupt: no Stop, no failure.
    await prompt("HOLD");
    await ev("session.error", {
      sessionID: S,
      error: { name: "MessageAbortedError", data: { message: "Aborted" } },
    });
    await ev("session.idle", { sessionID: S });
    // A rejected permission: no Stop.
    await prompt("RUN echo no");
    await ev("permission.replied", { sessionID: S, reply: "reject" });
    await ev("session.idle", { sessionID: S });
    // An API error.
    await prompt("FAIL 400");
    await ev("session.error", {
      sessionID: S,
      error: { name: "APIError", data: { message: "mock failure 400", statusCode: 400 } },
    });
    await ev("session.idle", { sessionID: S });
    // A sub-agent's session is not the pane's turn.
    await ev("session.created", { info: { id: "ses_child", parentID: S } });
    await hooks["chat.message"]({ sessionID: "ses_child" }, { parts: [{ type: "text", text: "sub" }] });
    await ev("session.idle", { sessionID: "ses_child" });
    // The last event, to know the queue has drained.
    await prompt("ECHO done");

    const expected = [
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PermissionRequest",
      "PostToolUse",
      "Stop",
      "UserPromptSubmit",
      "UserPromptSubmit",
      "UserPromptSubmit",
      "StopFailure",
      "UserPromptSubmit",
    ];
    const deadline = Date.now() + 20_000;
    let names: string[] = [];
    while (Date.now() < deadline) {
      names = [...Deno.readDirSync(out)].map((e) => e.name).sort();
      if (names.length >= expected.length) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(names.map((n) => n.replace(/^\d+-|\.json$/g, "")), expected);
    const payload = (i: number) => JSON.parse(Deno.readTextFileSync(`${out}/${names[i]}`));
    assert.deepEqual(payload(1), { session_id: S, prompt: "RUN echo hi > f.txt" });
    assert.deepEqual(payload(3).tool_input, { command: "echo hi > f.txt" });
    assert.equal(payload(3).tool_name, "bash");
    assert.deepEqual(payload(5), { session_id: S, last_assistant_message: "DONE: (no output)" });
    assert.equal(payload(9).error_type, "APIError");
    assert.equal(payload(9).error_message, "mock failure 400");
  } finally {
    if (previous === undefined) Deno.env.delete("PANEFLOW_SURFACE_ID");
    else Deno.env.set("PANEFLOW_SURFACE_ID", previous);
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the plugin's payloads become the ai.* frames they mean", async () => {
  const { hookFrame } = await import("./hook.ts");
  const ctx = { surfaceId: 7, tool: "opencode" };
  const ask = hookFrame("PermissionRequest", {
    session_id: "s",
    tool_name: "bash",
    tool_input: { command: "echo hi > f.txt" },
  }, ctx);
  assert.equal(ask?.method, "ai.notification");
  assert.equal(ask?.params.message, "bash: echo hi > f.txt");
  assert.equal(ask?.params.tool, "opencode");
  const stop = hookFrame("Stop", { session_id: "s", last_assistant_message: "hi" }, ctx);
  assert.equal(stop?.method, "ai.stop");
  assert.equal(stop?.params.last_result, "hi");
  const failed = hookFrame("StopFailure", { error_type: "APIError", error_message: "mock failure 400" }, ctx);
  assert.equal(failed?.params.error_type, "APIError");
  assert.equal(failed?.params.message, "mock failure 400");
  assert.equal(hookFrame("UserPromptSubmit", { prompt: "ECHO x" }, ctx)?.params.prompt, "ECHO x");
});
