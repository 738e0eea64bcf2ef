/**
 * A flow step that sends a queue message and waits for its result (issue
 * 16): the result becomes a variable later steps use; a failed message
 * fails the step; a bad `message` table is reported with file:line.
 */
import assert from "node:assert/strict";
import { waitUntil, withHost } from "./_harness.ts";

Deno.test("flow: a message step sends, waits, and captures the result", async () => {
  const root = await Deno.makeTempDir({ prefix: "pfq-" });
  try {
    await withHost({ config: JSON.stringify({ queue: { root, grace_secs: 2 } }) }, async (host) => {
      const flow = `${host.dir}/m.flow.toml`;
      await Deno.writeTextFile(
        flow,
        `name = "msg"

[[step]]
id = "worker"
pane = { command = "PS1='$ ' exec sh", name = "worker" }
ready = { pattern = "^\\\\$", timeout_secs = 20 }

[[step]]
id = "ask"
needs = ["worker"]
message = { to = "worker", from = "boss", content = "echo result-$((20+22))", var = "answer", timeout_secs = 30 }

[[step]]
id = "use"
needs = ["worker", "ask"]
send = { target = "worker", text = "echo got:\${answer}", submit = true }
ready = { pattern = "^got:result-42$", timeout_secs = 20 }

[[step]]
id = "nobody"
needs = ["worker"]
message = { to = "ghost", from = "boss", content = "hello", timeout_secs = 30 }
`,
      );
      const r = await host.cli(["flow", "run", flow, "--json"]);
      const report = JSON.parse(r.stdout);
      const by = Object.fromEntries(report.steps.map((s: { step: string }) => [s.step, s]));
      assert.equal(by.ask.status, "READY", r.stderr);
      assert.equal(by.use.status, "READY", r.stderr);
      assert.equal(report.captures.answer, "result-42");
      assert.equal(by.nobody.status, "FAILED");
      assert.match(by.nobody.error, /no pane named "ghost"/);
      assert.equal(r.code, 1);
      const ls = JSON.parse((await host.cli(["msg", "ls", "--json"])).stdout) as {
        to: string;
        status: string;
      }[];
      assert.deepEqual(ls.map((m) => `${m.to}:${m.status}`).sort(), ["ghost:failed", "worker:completed"]);

      const bad = `${host.dir}/bad.flow.toml`;
      await Deno.writeTextFile(
        bad,
        `name = "bad"\n\n[[step]]\nid = "a"\nmessage = { to = "x", content = "y", colour = "red" }\n`,
      );
      const b = await host.cli(["flow", "run", bad]);
      assert.equal(b.code, 2);
      assert.match(b.stderr, /bad\.flow\.toml:5.*colour/);
      await waitUntil("host still fine", async () => (await host.call("system.ping")).pong);
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
});
