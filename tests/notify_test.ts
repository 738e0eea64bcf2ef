/**
 * Notifications (docs/notify.md) with the real Claude Code offline: its
 * permission dialog reaches a local webhook receiver within a second with the
 * pane, agent and command; the reply link (through `paneflow web`) approves
 * it and the turn goes on; the link used again, or edited, is refused; a
 * short turn sends nothing to a rule with a long threshold, while a rule
 * without one gets the turn's result with a token-shaped secret redacted; a
 * sink that never answers is logged once and does not slow the host.
 */
import assert from "node:assert/strict";
import { startAgent, submit, waitStatus } from "./_agents.ts";
import { waitUntil, withHost } from "./_harness.ts";
import { startWeb } from "./_web.ts";
import { Client } from "../src/client/client.ts";
import { eventSchemas } from "../src/spec/events.ts";

interface Received {
  at: number;
  body: Record<string, unknown>;
}

/** A local webhook receiver: keeps every JSON body POSTed to it. */
function receiver() {
  const got: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    got.push({ at: Date.now(), body: await req.json() });
    return new Response("ok");
  });
  return { got, url: `http://127.0.0.1:${server.addr.port}/hook`, close: () => server.shutdown() };
}

/** A listener that accepts and never answers: a hung endpoint. */
function hungEndpoint() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const conns: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const c of listener) conns.push(c);
  })().catch(() => {});
  return {
    url: `http://127.0.0.1:${(listener.addr as Deno.NetAddr).port}/`,
    async close() {
      listener.close();
      for (const c of conns) c.close();
      await accepting;
    },
  };
}

async function post(url: string, body?: unknown): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { accept: "application/json", "content-type": "application/json" },
    body: JSON.stringify(body ?? {}),
  });
  return { status: res.status, json: await res.json() };
}

Deno.test("notify: a permission dialog reaches a webhook; its reply link approves it once", async () => {
  const main = receiver();
  const other = receiver();
  const hung = hungEndpoint();
  const config = {
    notify: {
      sinks: {
        phone: { type: "webhook", url: main.url },
        log: { type: "webhook", url: other.url },
        dead: { type: "webhook", url: hung.url, timeout_ms: 30_000, retries: 0 },
      },
      rules: [
        {
          when: ["waiting_for_input", "finished"],
          to: ["phone", "dead"],
          min_turn_secs: 3600,
          debounce_secs: 0,
        },
        { when: ["finished"], to: ["log"], min_turn_secs: 0, debounce_secs: 0 },
      ],
    },
  };
  try {
    await withHost({ config: JSON.stringify(config) }, async (host) => {
      const web = await startWeb(host);
      const cs = await startAgent(host, { name: "cs", hooked: true });
      const stream = await Client.connect(host.socket);
      try {
        await stream.subscribe({ types: ["remote_reply"] });
        cs.mock.enqueue({ kind: "bash", command: "touch approved.txt", then: "Approved and done." });
        assert.equal((await submit(host, "cs", "make the approved file")).status, "submitted");
        await waitUntil("the webhook POST", () => main.got.length > 0, { timeoutMs: 60_000 });
        const st = await waitStatus(host, "cs", "the dialog", (s) => s.state === "waiting_for_input");
        const first = main.got[0];
        const since = Date.now() - st.waiting_ms;
        assert.ok(first.at - since < 1000, `the POST came ${first.at - since} ms after the dialog`);
        const body = first.body as {
          event: string;
          pane: { id: number; name: string };
          agent: string;
          command: string;
          replies: Record<string, string>;
          untrusted: string[];
        };
        assert.equal(body.event, "waiting_for_input");
        assert.deepEqual(body.pane, { id: cs.surfaceId, name: "cs" });
        assert.equal(body.agent, "claude");
        assert.match(body.command, /touch approved\.txt/);
        assert.deepEqual(body.untrusted, ["command", "result"]);
        assert.ok(body.replies.approve?.startsWith(web.base), JSON.stringify(body.replies));

        // An edited link (another pane, same signature) is refused and answers nothing.
        const [claim, mac] = body.replies.approve.split("/r/")[1].split(".");
        const decoded = JSON.parse(atob(claim.replace(/-/g, "+").replace(/_/g, "/")));
        const edited = btoa(JSON.stringify({ ...decoded, surface_id: decoded.surface_id + 1 }))
          .replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
        const forged = await post(`${web.base}r/${edited}.${mac}`);
        assert.equal(forged.status, 403);
        assert.match(String(forged.json.error), /signature does not match/);

        const approved = await post(body.replies.approve);
        assert.equal(approved.status, 200, JSON.stringify(approved.json));
        assert.equal(approved.json.action, "approve");
        await waitStatus(host, "cs", "the turn to go on and finish", (s) => s.state === "finished", 20_000);
        assert.ok((await Deno.stat(`${cs.setup.projectDir}/approved.txt`)).isFile);

        const again = await post(body.replies.approve);
        assert.equal(again.status, 403);
        assert.match(String(again.json.error), /used already/);

        // Each use is a remote_reply event, with where it came from.
        const replies: Record<string, unknown>[] = [];
        await waitUntil("three remote_reply events", async () => {
          const m = await stream.nextWithin(200);
          if (m) {
            const r = eventSchemas.remote_reply.safeParse(m.value);
            assert.ok(r.success, JSON.stringify(m.value));
            assert.deepEqual(r.data, m.value);
            replies.push(m.value);
          }
          return replies.length >= 3;
        }, { timeoutMs: 5000 });
        assert.deepEqual(replies.map((r) => [r.action, r.ok, r.origin]), [
          [null, false, "127.0.0.1"],
          ["approve", true, "127.0.0.1"],
          [null, false, "127.0.0.1"],
        ]);
        assert.equal(replies[1].surface_id, cs.surfaceId);

        // The short turn: the "log" rule (no threshold) hears of it, with the secret redacted; "phone" does not.
        await waitUntil("the finished notification", () => other.got.length > 0, { timeoutMs: 10_000 });
        assert.ok(main.got.every((g) => g.body.event === "waiting_for_input"), JSON.stringify(main.got));
        cs.mock.enqueue({ kind: "text", text: "Here it is: api_key=sk-live-abcdefghijklmnopqrstuvwx done" });
        assert.equal((await submit(host, "cs", "print the key")).status, "submitted");
        await waitUntil("the second finished notification", () => other.got.length > 1, {
          timeoutMs: 30_000,
        });
        const result = String(other.got[1].body.result);
        assert.match(result, /\[REDACTED\]/);
        assert.doesNotMatch(result, /abcdefghijklmnop/);

        // The hung sink: one log line, and the host answers pings as fast as ever.
        const ls = await host.call("notify.ls" as never) as unknown as {
          sinks: { name: string; sent: number; queued: number }[];
        };
        assert.equal(ls.sinks.find((s) => s.name === "phone")!.sent, 1);
        const t0 = performance.now();
        for (let i = 0; i < 20; i++) await host.rpc("system.ping");
        assert.ok(performance.now() - t0 < 2000, "pings while a sink hangs");
      } finally {
        stream.close();
        await web.stop();
        await cs.dispose();
      }
    });
  } finally {
    await Promise.all([main.close(), other.close(), hung.close()]);
  }
});
