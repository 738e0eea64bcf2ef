/**
 * `paneflow mcp install` for Codex and Gemini CLI, verified by the real CLIs:
 * each, against its mock (which requests the tool calls), calls `read_pane`
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

/** What the tests need of either mock. */
interface ToolMock {
  requests: { kind: string; tools?: string[]; body: unknown }[];
}

/**
 * Submits `TOOL <tool> <args>` until the agent offers the tool and calls it,
 * approving its dialog if it asks; returns the follow-up request carrying
 * `want`. Neither agent waits for its MCP servers before a turn (Codex 0.169
 * sends the first turn with whatever tools are ready; Gemini connects in the
 * background): a turn whose request lacks the tool is let finish and the
 * prompt sent again.
 */
async function callTool(
  host: TestHost,
  mock: ToolMock,
  pane: string,
  tool: string,
  args: string,
  want: string,
): Promise<{ body: string; tools: string[] }> {
  const deadline = Date.now() + 90_000;
  for (let attempt = 1;; attempt++) {
    const seen = mock.requests.length;
    const r = await submit(host, pane, `TOOL ${tool} ${args}`);
    assert.equal(r.status, "submitted", r.evidence);
    const turn = await waitUntil(
      `the turn of TOOL ${tool} at the mock`,
      () => mock.requests.slice(seen).find((q) => q.kind === "turn") ?? null,
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    const tools = turn.tools ?? [];
    if (tools.some((t) => t.includes(tool))) {
      const body = await waitUntil(`a tool result with ${want} at the mock`, async () => {
        const hit = mock.requests.slice(seen).find((q) =>
          q.kind === "followup" && JSON.stringify(q.body).includes(want)
        );
        if (hit) return JSON.stringify(hit.body);
        const s = await host.json<{ state: string; waiting_ms: number }>(["status", pane, "--json"]);
        if (s.state === "waiting_for_input" && s.waiting_ms > 250) {
          // Approve once, then let the dialog close: a second "1" would land in the input box.
          await ok(host, ["key", pane, "1"]);
          await waitStatus(host, pane, "the dialog to close", (t) => t.state !== "waiting_for_input", 5_000)
            .catch(() => {});
        }
        return null;
      }, { timeoutMs: 60_000, intervalMs: 100 }).catch(async (e) => {
        const sent = mock.requests.slice(seen).map((q) => `${q.kind}: ${JSON.stringify(q.body).slice(-600)}`);
        const text = (await host.cli(["read", pane, "--raw"])).stdout;
        throw new Error(
          `${(e as Error).message}\n--- requests ---\n${sent.join("\n")}\n--- screen ---\n${text}`,
        );
      });
      await waitStatus(host, pane, "finished", (s) => s.state === "finished", 30_000);
      return { body, tools };
    }
    // The agent had not connected to the bridge yet: let the turn end, then ask again.
    if (Date.now() > deadline) {
      throw new Error(
        `${pane} never offered ${tool} in ${attempt} turns; tools offered: ${tools.join(", ")}`,
      );
    }
    await waitStatus(host, pane, "the turn without the tool to end", (s) => s.state === "finished", 30_000);
  }
}

async function notesPane(host: TestHost) {
  await host.json(["new", "--pane-name", "notes", "-c", `echo ${SECRET}; exec sleep 300`]);
  await waitUntil(
    "the notes pane's text",
    async () => (await host.cli(["read", "notes", "--raw"])).stdout.includes(SECRET),
  );
}

/** Every tool name the agent offered is read-only: no paneflow tool that writes to a pane. */
function assertReadOnly(tools: string[]) {
  assert.ok(
    !tools.some((t) => /paneflow.*(send|submit|key|write|close)/.test(t)),
    `tools: ${tools.join(", ")}`,
  );
}

/**
 * Codex 0.169 offers MCP tools grouped as `{type: "namespace", name: "mcp__paneflow", tools: [...]}`
 * and routes a call by the item's `namespace` and `name` (a bare `read_pane` is "unsupported call");
 * the mock answers in that shape (tests/_mock_openai.ts).
 */
Deno.test("mcp: the real Codex CLI reads and lists panes through the bridge mcp install registered", async () => {
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
        // The agent reads "notes" in another workspace: a pane reads its own by default (docs/security.md).
        "--caps",
        "read=all",
        "--cwd",
        env.projectDir,
        ...env.envArgs,
      ]);
      await waitStatus(host, "cx", "the agent idle", (s) => s.tool !== null && s.state === "idle", 60_000);
      const read = await callTool(host, mock, "cx", "read_pane", `{"target":"notes","lines":20}`, SECRET);
      assert.match(read.body, /untrusted_terminal_output/);
      assert.ok(read.tools.includes("mcp__paneflow__read_pane"), `tools offered: ${read.tools.join(", ")}`);
      assertReadOnly(read.tools);
      const list = await callTool(host, mock, "cx", "list_panes", "{}", '\\"notes\\"');
      assert.match(list.body, /notes/);
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
        // The agent reads "notes" in another workspace: a pane reads its own by default (docs/security.md).
        "--caps",
        "read=all",
        "--cwd",
        env.projectDir,
        ...env.envArgs,
      ]);
      await waitStatus(host, "gm", "the agent idle", (s) => s.tool !== null && s.state === "idle", 60_000);
      const read = await callTool(host, mock, "gm", "read_pane", `{"target":"notes","lines":20}`, SECRET);
      assert.match(read.body, /untrusted_terminal_output/);
      assertReadOnly(read.tools);
      const list = await callTool(host, mock, "gm", "list_panes", "{}", '\\"notes\\"');
      assert.match(list.body, /notes/);
    });
  } finally {
    await mock.close();
    await env.cleanup();
  }
});
