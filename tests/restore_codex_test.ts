/**
 * Restore with the real Codex CLI, offline against the mock Responses API:
 * a hooked Codex pane holds two turns, the host is SIGKILLed, and the next
 * host resumes the pane's own thread (`codex resume <thread id>` with the
 * same environment); the next request carries the earlier turns.
 * docs/restore.md.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startHost, type TestHost, waitUntil } from "./_harness.ts";
import { codexCommand, ensureCodex, isCodexIdle, prepareCodexEnv } from "./_codex.ts";
import { startMockOpenAi } from "./_mock_openai.ts";

async function screenOf(host: TestHost, pane: string): Promise<string> {
  const r = await host.cli(["read", pane, "--raw"]);
  return r.code === 0 ? r.stdout : "";
}

async function until(host: TestHost, pane: string, what: string, pred: (s: string) => boolean) {
  let last = "";
  try {
    await waitUntil(`${pane}: ${what}`, async () => pred(last = await screenOf(host, pane)), {
      timeoutMs: 45_000,
      intervalMs: 100,
    });
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- ${pane} ---\n${last}`);
  }
}

Deno.test("restore: a hooked Codex pane resumes its own thread after SIGKILL", async () => {
  const bin = await ensureCodex();
  const mock = await startMockOpenAi();
  const env = await prepareCodexEnv({ baseUrl: mock.baseUrl });
  const run = await Deno.makeTempDir({ prefix: "pf-rx-" });
  const hostEnv = { XDG_STATE_HOME: `${env.root}/state` };
  const start = () => startHost({ dir: run, config: JSON.stringify({ restore: "on" }), env: hostEnv });
  let host = await start();
  const turn = async (prompt: string, reply: string) => {
    const r = await host.cli(["send", "cx", prompt, "--submit"]);
    assert.equal(r.code, 0, r.stderr);
    await until(host, "cx", `the reply ${reply}`, (s) => s.includes(`• ${reply}`) && isCodexIdle(s));
  };
  try {
    const setup = await host.cli(["hooks", "setup", "--agent", "codex"], { env: env.env });
    assert.equal(setup.code, 0, setup.stderr);
    const r = await host.cli([
      "new",
      "-c",
      codexCommand(bin),
      "--pane-name",
      "cx",
      "--cwd",
      env.projectDir,
      ...env.envArgs,
    ]);
    assert.equal(r.code, 0, r.stderr);
    // Codex asks once to trust the new hooks; answered as a user would.
    const s = await waitUntil("the hooks-review dialog", async () => {
      const st = await host.json<{ state: string; dialog_id?: string }>(["status", "cx", "--json"]);
      return st.state === "waiting_for_input" && st;
    }, { timeoutMs: 30_000, intervalMs: 100 });
    const a = await host.cli(["answer", "cx", "approve", "--dialog", s.dialog_id!]);
    assert.equal(a.code, 0, a.stderr);
    await until(host, "cx", "idle", isCodexIdle);
    await turn("ECHO CODEX-A1", "CODEX-A1");
    await turn("ECHO CODEX-A2", "CODEX-A2");
    const thread = await waitUntil("the journal to hold the thread id", async () => {
      for (const e of Deno.readDirSync(`${env.root}/state/paneflow/journals`)) {
        if (!e.name.endsWith(".json") || e.name.includes("previous")) continue;
        const j = JSON.parse(await Deno.readTextFile(`${env.root}/state/paneflow/journals/${e.name}`));
        const id = j.workspaces?.[0]?.panes?.[0]?.agent?.session_id;
        if (id) return id as string;
      }
      return false;
    }, { timeoutMs: 15_000, intervalMs: 100 });

    Deno.kill(host.pid, "SIGKILL");
    await host.stop();
    host = await start();
    await until(host, "cx", "the resumed composer", isCodexIdle);
    const st = await host.json<{ pid: number }>(["status", "cx", "--json"]);
    const argv = Deno.readTextFileSync(`/proc/${st.pid}/cmdline`).split("\0").filter(Boolean);
    assert.deepEqual(argv.slice(1, 3), ["resume", thread]);
    await turn("ECHO CODEX-A3", "CODEX-A3");
    const body = JSON.stringify(mock.turns().at(-1)?.body ?? {});
    for (const part of ["CODEX-A1", "CODEX-A2", "CODEX-A3"]) {
      assert.ok(body.includes(part), `the request carries ${part}`);
    }
  } catch (e) {
    console.error(`--- host log ---\n${host.log()}--- end host log ---`);
    throw e;
  } finally {
    await host.stop();
    await mock.close();
    await env.cleanup();
    await Deno.remove(run, { recursive: true }).catch(() => {});
  }
});
