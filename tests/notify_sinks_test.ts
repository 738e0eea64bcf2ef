/**
 * The notify sinks against local receivers, no agent needed: a pane that
 * exits non-zero reaches a webhook, a Slack-shaped and an ntfy-shaped
 * receiver and a command, only for the panes the rule's `where` takes; the
 * events and replies fit their schemas; `notify ls` and `notify test` (a
 * sink that is down: one log line for the outage, however many tries); the
 * desktop sink runs notify-send.
 */
import assert from "node:assert/strict";
import type { z } from "zod";
import { Client } from "../src/client/client.ts";
import { eventSchemas } from "../src/spec/events.ts";
import { results } from "../src/spec/results.ts";
import { waitUntil, withHost } from "./_harness.ts";

function fits(schema: z.ZodType, value: unknown, what: string): void {
  const r = schema.safeParse(value);
  assert.ok(
    r.success,
    `${what}: ${r.success ? "" : JSON.stringify(r.error.issues)}\n${JSON.stringify(value)}`,
  );
  assert.deepEqual(r.data, value, `${what} carries a field its schema does not declare`);
}

function notifySendPresent(): boolean {
  try {
    new Deno.Command("notify-send", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync();
    return true;
  } catch {
    return false;
  }
}

Deno.test("notify: webhook, Slack, ntfy and command sinks; notify ls and test; events", async () => {
  const got: { path: string; body: Record<string, unknown> }[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    got.push({ path: new URL(req.url).pathname, body: await req.json() });
    return new Response("ok");
  });
  const base = `http://127.0.0.1:${server.addr.port}`;
  const closed = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const downUrl = `http://127.0.0.1:${(closed.addr as Deno.NetAddr).port}/`;
  closed.close();
  const dir = await Deno.makeTempDir({ prefix: "pf-notify-" });
  const config = {
    notify: {
      sinks: {
        hook: { type: "webhook", url: `${base}/hook` },
        slack: { type: "slack", url: `${base}/slack` },
        ntfy: { type: "ntfy", url: `${base}/agents` },
        cmd: { type: "command", command: `cat > ${dir}/cmd.json` },
        down: { type: "webhook", url: downUrl, retries: 1 },
        desk: { type: "desktop", retries: 0 },
      },
      rules: [{ when: ["exited_nonzero"], where: { pane: "fail*" }, to: ["hook", "slack", "ntfy", "cmd"] }],
    },
  };
  try {
    await withHost({ config: JSON.stringify(config) }, async (host) => {
      const stream = await Client.connect(host.socket);
      try {
        await stream.subscribe({ types: ["notification_sent", "notification_failed"] });
        for (const [name, code] of [["ok1", 0], ["other", 4], ["fail1", 3]] as const) {
          const r = await host.cli(["new", "-c", `exit ${code}`, "--pane-name", name]);
          assert.equal(r.code, 0, r.stderr);
        }
        const sent: Record<string, unknown>[] = [];
        await waitUntil("four notification_sent events", async () => {
          const m = await stream.nextWithin(200);
          if (m) {
            fits(eventSchemas[m.value.type as keyof typeof eventSchemas], m.value, String(m.value.type));
            sent.push(m.value);
          }
          return sent.length >= 4;
        }, { timeoutMs: 10_000 });
        assert.deepEqual(sent.map((e) => e.sink).sort(), ["cmd", "hook", "ntfy", "slack"]);
        assert.ok(sent.every((e) => e.type === "notification_sent" && e.event === "exited_nonzero"));

        await waitUntil("three POSTs", () => got.length >= 3, { timeoutMs: 5000 });
        const byPath = Object.fromEntries(got.map((g) => [g.path, g.body]));
        const hook = byPath["/hook"] as { event: string; pane: { name: string }; exit_code: number };
        assert.deepEqual([hook.event, hook.pane.name, hook.exit_code], ["exited_nonzero", "fail1", 3]);
        const slack = byPath["/slack"] as { text: string; blocks: unknown[] };
        assert.match(slack.text, /in fail1 exited with code 3/);
        const ntfy = byPath["/"] as { topic: string; title: string; priority: number; tags: string[] };
        assert.deepEqual([ntfy.topic, ntfy.priority, ntfy.tags], ["agents", 4, ["warning"]]);
        const cmd = JSON.parse(await Deno.readTextFile(`${dir}/cmd.json`));
        assert.equal(cmd.pane.name, "fail1");

        const ls = await host.json(["notify", "ls", "--json"]);
        fits(results["notify.ls"], ls, "notify.ls");
        const human = await host.cli(["notify", "ls"]);
        assert.match(human.stdout, /^hook +webhook +1 +0 +0 +0 /m);

        const test = await host.json(["notify", "test", "hook", "--json"]);
        fits(results["notify.test"], test, "notify.test");
        assert.equal(got.at(-1)?.body.event, "test");

        // A sink that is down: exit 1 with one line; one log line for the outage over two tries.
        for (let i = 0; i < 2; i++) {
          const r = await host.cli(["notify", "test", "down"]);
          assert.equal(r.code, 1, r.stdout);
          assert.match(r.stderr.trim(), /^paneflow: Sink "down" failed after 2 attempt\(s\): /);
        }
        assert.equal(
          host.log().split("\n").filter((l) => l.includes('sink "down" failed')).length,
          1,
          host.log(),
        );

        const none = await host.cli(["notify", "test", "nosuch"]);
        assert.equal(none.code, 2);
        assert.match(none.stderr, /No sink named "nosuch" in the config; sinks: "hook", "slack"/);
      } finally {
        stream.close();
      }
    });
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "notify: the desktop sink runs notify-send",
  ignore: !notifySendPresent(),
  fn: async () => {
    const config = { notify: { sinks: { desk: { type: "desktop", retries: 0, timeout_ms: 5000 } } } };
    await withHost({ config: JSON.stringify(config) }, async (host) => {
      const r = await host.cli(["notify", "test", "desk", "--json"]);
      const out = JSON.parse(r.stdout);
      // With a notification daemon it shows; without one (CI, no D-Bus session) notify-send's own reason comes back.
      if (!out.ok) assert.match(out.error, /^exited with code \d+: \S/, out.error);
      else assert.equal(r.code, 0);
    });
  },
});

if (!notifySendPresent()) {
  console.error(
    "notify_sinks_test: notify-send is not installed (apt-get install libnotify-bin); desktop test skipped",
  );
}
