/**
 * Restore with the real Claude Code, offline against the mock API: two
 * panes in one project directory, started with `--model` and `--settings`
 * and hooked (their session ids come from the hooks), hold a conversation
 * each; the host is SIGKILLed; the next host resumes each pane's own
 * conversation (`claude --resume <its id>` with the same flags and
 * environment), and the next request the mock sees carries that
 * conversation's earlier turns and not the other's. docs/restore.md.
 *
 * @module
 */
import assert from "node:assert/strict";
import { startHost, type TestHost, waitUntil } from "./_harness.ts";
import { ensureClaude, isIdleComposer, prepareClaudeEnv, shQuote } from "./_claude.ts";
import { startMockAnthropic } from "./_mock_anthropic.ts";
import { journalPaths } from "../src/restore/journal.ts";

const MODEL = "claude-restore-test-model";

async function screenOf(host: TestHost, pane: string): Promise<string> {
  const r = await host.cli(["read", pane, "--raw"]);
  return r.code === 0 ? r.stdout : "";
}

async function idle(host: TestHost, pane: string, what: string) {
  let last = "";
  try {
    await waitUntil(`${pane}: ${what}`, async () => {
      last = await screenOf(host, pane);
      return isIdleComposer(last);
    }, { timeoutMs: 45_000, intervalMs: 100 });
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- ${pane} ---\n${last}`);
  }
}

/** The agent process of a pane, as the host's status says. */
async function agentPid(host: TestHost, pane: string): Promise<number> {
  return await waitUntil(`${pane}'s agent pid`, async () => {
    const s = await host.json<{ pid: number | null; tool: string | null }>(["status", pane, "--json"]);
    return s.tool === "claude" && s.pid;
  }, { timeoutMs: 20_000 });
}

const argvOf = (pid: number) => Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0").filter(Boolean);
const envOf = (pid: number) =>
  new Map(
    Deno.readTextFileSync(`/proc/${pid}/environ`).split("\0").filter(Boolean).map((kv) => {
      const i = kv.indexOf("=");
      return [kv.slice(0, i), kv.slice(i + 1)] as [string, string];
    }),
  );

Deno.test("restore: two hooked Claude Code panes in one directory resume their own conversations with the same flags and env after SIGKILL", async (t) => {
  const bin = await ensureClaude();
  const mock = await startMockAnthropic();
  const setup = await prepareClaudeEnv({ baseUrl: mock.url });
  const run = await Deno.makeTempDir({ prefix: "pf-rc-" });
  const state = `${setup.root}/state`;
  const env = { XDG_STATE_HOME: state };
  const start = () => startHost({ dir: run, config: JSON.stringify({ restore: "on" }), env });
  let host = await start();
  const settingsFile = `${setup.root}/extra-settings.json`;
  await Deno.writeTextFile(settingsFile, JSON.stringify({ includeCoAuthoredBy: false }));
  const journal = journalPaths(`${run}/s.sock`, { get: (k) => k === "XDG_STATE_HOME" ? state : undefined });
  const turn = async (pane: string, prompt: string, reply: string) => {
    mock.enqueue({ kind: "text", text: reply });
    const r = await host.cli(["send", pane, prompt, "--submit"]);
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      `${pane}: the reply "${reply}"`,
      async () => (await screenOf(host, pane)).includes(reply),
      {
        timeoutMs: 30_000,
        intervalMs: 100,
      },
    );
    await idle(host, pane, `idle after "${prompt}"`);
  };
  /** The last main request's conversation as text. */
  const lastConversation = () =>
    JSON.stringify(
      (mock.requests.findLast((q) => q.kind === "main")?.body as { messages?: unknown })?.messages ?? [],
    );
  try {
    const sessions = new Map<string, string>();
    await t.step(
      "two Claude panes in one project dir, --model and --settings, two turns and one",
      async () => {
        const r = await host.cli(["hooks", "setup", "--agent", "claude"], {
          env: { CLAUDE_CONFIG_DIR: setup.configDir },
        });
        assert.equal(r.code, 0, r.stderr);
        for (const name of ["cc1", "cc2"]) {
          await host.json([
            "new",
            "--name",
            `ws-${name}`,
            "-c",
            [bin, "--model", MODEL, "--settings", settingsFile].map(shQuote).join(" "),
            "--pane-name",
            name,
            "--cwd",
            setup.projectDir,
            ...setup.envArgs,
          ]);
          await idle(host, name, "the first composer");
        }
        await turn("cc1", "alpha one", "REPLY-A1");
        await turn("cc1", "alpha two", "REPLY-A2");
        await turn("cc2", "beta one", "REPLY-B1");
        assert.equal(mock.requests.findLast((q) => q.kind === "main")?.model, MODEL);
        await waitUntil("the journal to hold both conversations", async () => {
          const j = JSON.parse(await Deno.readTextFile(journal.live));
          for (const w of j.workspaces) {
            for (const p of w.panes) if (p.agent?.session_id) sessions.set(p.name, p.agent.session_id);
          }
          return sessions.size === 2 && sessions.get("cc1") !== sessions.get("cc2");
        }, { timeoutMs: 15_000, intervalMs: 100 });
      },
    );

    await t.step("host SIGKILLed; the next host resumes each pane's own conversation", async () => {
      Deno.kill(host.pid, "SIGKILL");
      await host.stop();
      host = await start();
      for (const name of ["cc1", "cc2"]) {
        await idle(host, name, "the resumed composer");
        const pid = await agentPid(host, name);
        const argv = argvOf(pid);
        assert.deepEqual(argv.slice(1), [
          "--resume",
          sessions.get(name)!,
          "--model",
          MODEL,
          "--settings",
          settingsFile,
        ]);
        const e = envOf(pid);
        for (const key of ["ANTHROPIC_BASE_URL", "CLAUDE_CONFIG_DIR", "HOME", "ANTHROPIC_API_KEY"]) {
          assert.equal(e.get(key), setup.env[key], `${name}: ${key} as given`);
        }
        const { surfaces } = await host.call("surface.list");
        const s = surfaces.find((x) => x.name === name)!;
        assert.equal(s.restored?.how, "resume");
        assert.equal(s.cwd, setup.projectDir);
      }
      await turn("cc1", "alpha three", "REPLY-A3");
      const a = lastConversation();
      for (const part of ["alpha one", "REPLY-A1", "alpha two", "REPLY-A2", "alpha three"]) {
        assert.ok(a.includes(part), `cc1's next request carries "${part}"`);
      }
      assert.ok(!a.includes("beta one"), "cc1's conversation is not cc2's");
      assert.equal(mock.requests.findLast((q) => q.kind === "main")?.model, MODEL);
      await turn("cc2", "beta two", "REPLY-B2");
      const b = lastConversation();
      assert.ok(
        b.includes("beta one") && b.includes("REPLY-B1"),
        "cc2's next request carries its first turn",
      );
      assert.ok(!b.includes("alpha one"), "cc2's conversation is not cc1's");
    });
  } catch (e) {
    console.error(`--- host log ---\n${host.log()}--- end host log ---`);
    throw e;
  } finally {
    await host.stop();
    await mock.close();
    await setup.cleanup();
    await Deno.remove(run, { recursive: true }).catch(() => {});
  }
});
