/**
 * Large prompts (over 16 KiB) to the real Claude Code 2.1.328 against the
 * offline mock API: `send --submit`, queue delivery and `ask` each write the
 * prompt to a file in the host's `prompts/` directory (0600) and submit it by
 * reference, and every one of those files is deleted when the pane closes.
 */
import assert from "node:assert/strict";
import { ensureClaude } from "./_claude.ts";
import { exists, waitUntil, withHost } from "./_harness.ts";
import { startAgent, submit, waitStatus } from "./_agents.ts";

/** A prompt over 16 KiB whose first line names where it came from. */
const big = (tag: string) =>
  `${tag}: follow these steps.${"\nOne step of a long task description.".repeat(600)}`;

const REFERENCE = /^Read the file (\S+) and follow the instructions in it\.$/;

Deno.test("a large prompt goes by file from send, queue delivery and ask alike, and each file goes with the pane", async () => {
  await ensureClaude();
  const root = await Deno.makeTempDir({ prefix: "pfq-" });
  try {
    await withHost({ config: JSON.stringify({ queue: { root } }) }, async (host) => {
      const cc = await startAgent(host, { name: "worker", hooked: true });
      try {
        await waitStatus(host, "worker", "hooked and idle", (s) => s.hooked && s.state === "idle", 20_000);
        const prompts = `${host.socket.slice(0, host.socket.lastIndexOf("/"))}/prompts`;

        cc.mock.enqueue({ kind: "text", text: "Send read." });
        const sent = await submit(host, "worker", big("SEND"));
        assert.equal(sent.status, "submitted", JSON.stringify(sent));
        await waitStatus(
          host,
          "worker",
          "the send's turn to end",
          (s) => s.last_result === "Send read.",
          20_000,
        );

        cc.mock.enqueue({ kind: "text", text: "Queue read." });
        const queued = await host.cli(["msg", "send", "--from", "boss", "--to", "worker", "-"], {
          stdin: big("QUEUE"),
        });
        assert.equal(queued.code, 0, queued.stderr);
        const waited = await host.cli(["msg", "wait", queued.stdout.trim(), "--timeout", "60"]);
        assert.equal(waited.code, 0, waited.stderr);
        assert.equal(waited.stdout, "Queue read.\n");

        cc.mock.enqueue({ kind: "text", text: "Ask read.\nDONE-9" });
        const asked = await host.cli(["ask", "worker", big("ASK"), "--marker", "DONE-9", "--timeout", "60"]);
        assert.equal(asked.code, 0, asked.stderr);
        assert.match(asked.stdout, /Ask read\./);

        // The agent got three references, each to a file of its own holding the whole prompt.
        const texts = cc.mock.prompts().map((p) => (p.texts ?? []).join("\n"));
        assert.equal(texts.length, 3, JSON.stringify(texts));
        const files = texts.map((t) => REFERENCE.exec(t)?.[1] ?? assert.fail(`not a file reference: ${t}`));
        assert.equal(new Set(files).size, 3);
        for (const [i, tag] of ["SEND", "QUEUE", "ASK"].entries()) {
          assert.equal(files[i].slice(0, files[i].lastIndexOf("/")), prompts);
          assert.equal(await Deno.readTextFile(files[i]), big(tag));
          assert.equal((await Deno.stat(files[i])).mode! & 0o777, 0o600);
        }

        // The pane closes: every file goes, whichever path wrote it.
        const closed = await host.cli(["close", "worker"]);
        assert.equal(closed.code, 0, closed.stderr);
        await waitUntil("the prompt files to be deleted", async () => {
          for (const f of files) if (await exists(f)) return false;
          return true;
        });
        assert.deepEqual([...Deno.readDirSync(prompts)], []);
      } finally {
        await cc.dispose();
      }
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
