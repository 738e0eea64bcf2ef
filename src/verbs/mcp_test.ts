import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { bridgeCommand, parseMcpArgs } from "./mcp.ts";

Deno.test("parseMcpArgs: no action serves; actions and agent names are checked", () => {
  assert.deepEqual(parseMcpArgs([], []), { action: "serve", agents: [] });
  assert.deepEqual(parseMcpArgs(["install"], ["Claude-Code", "codex", "claude"]), {
    action: "install",
    agents: ["claude", "codex"],
  });
  assert.deepEqual(parseMcpArgs(["status"], ["gemini-cli", "opencode"]).agents, ["gemini", "opencode"]);
  assert.throws(() => parseMcpArgs(["setup"], []), (e: unknown) => {
    assert.ok(e instanceof UsageError);
    assert.match(
      e.message,
      /^Unknown action "setup" for paneflow mcp; expected install, status or uninstall/,
    );
    return true;
  });
  assert.throws(
    () => parseMcpArgs(["install"], ["cursor"]),
    /Unknown agent "cursor"; expected one of claude/,
  );
});

Deno.test("bridgeCommand: this program plus `mcp`, and an optional pinned socket", () => {
  const cmd = bridgeCommand();
  assert.equal(cmd.command, Deno.execPath());
  assert.equal(cmd.args.at(-1), "mcp");
  assert.equal(cmd.env, undefined);
  assert.deepEqual(bridgeCommand("/run/pf.sock").env, { PANEFLOW_SOCKET_PATH: "/run/pf.sock" });
});
