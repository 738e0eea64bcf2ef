/**
 * PaneIO reply by marker, readiness and clearing against real shells
 * (docs/paneio.md): `ask` in sh and bash with their default prompts,
 * a marker inside the echoed command, multi-line replies, a timeout (exit
 * 4); `ready` while `sleep` runs and after, and a `ready --wait` longer than
 * the client's reply deadline; `clear`.
 */
import assert from "node:assert/strict";
import { readPane, waitUntil, withHost } from "./_harness.ts";
import { outsideFence } from "./_fence.ts";

const BASH = "bash --norc --noprofile";

Deno.test("ask, ready and clear against sh and bash", async (t) => {
  await withHost({}, async (host) => {
    await host.json(["new", "--pane-name", "sh1", "-c", "PS1='$ ' exec sh"]);
    await host.json(["split", "h", "--name", "bash1", "-c", `exec ${BASH}`]);
    for (const p of ["sh1", "bash1"]) {
      await waitUntil(`${p} ready`, async () => (await host.cli(["ready", p])).code === 0, {
        timeoutMs: 15_000,
      });
    }

    for (const p of ["sh1", "bash1"]) {
      await t.step(`${p}: a one-line reply`, async () => {
        const r = await host.cli([
          "ask",
          p,
          "echo hello-$((6*7)); echo __DONE__",
          "--marker",
          "__DONE__",
          "--raw",
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, "hello-42\n");
      });

      await t.step(
        `${p}: the marker inside the echoed command does not count; multi-line reply`,
        async () => {
          const r = await host.cli([
            "ask",
            p,
            "printf 'one\\ntwo\\n\\nthree MARK-ish\\n'; echo MARK",
            "--marker",
            "MARK",
            "--raw",
            "--json",
          ]);
          assert.equal(r.code, 0, r.stderr);
          const j = JSON.parse(r.stdout);
          // "three MARK-ish" holds the marker too: the reply ends there, with what came before it on that row.
          assert.equal(j.reply, "one\ntwo\n\nthree");
          assert.ok(j.elapsed_ms >= 0);
        },
      );

      await t.step(`${p}: a reply of many lines, prompt lines removed`, async () => {
        const r = await host.cli([
          "ask",
          p,
          "seq 1 30; echo; echo END-OF-IT",
          "--marker",
          "END-OF-IT",
          "--raw",
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.equal(r.stdout, Array.from({ length: 30 }, (_, i) => i + 1).join("\n") + "\n");
      });

      await t.step(`${p}: a timeout exits 4 and names the last line seen`, async () => {
        const r = await host.cli([
          "ask",
          p,
          "echo still-working",
          "--marker",
          "NEVER-SHOWS",
          "--timeout",
          "0.5",
          "--raw",
        ]);
        assert.equal(r.code, 4, r.stderr);
        assert.match(r.stderr, /NEVER-SHOWS/);
        assert.match(r.stderr, /last seen: .*(still-working|[$#])/);
      });

      await t.step(
        `${p}: with the fence on, the reply and the last line seen are only inside it`,
        async () => {
          const r = await host.cli([
            "ask",
            p,
            "echo fenced-$((6*7)); echo __F__",
            "--marker",
            "__F__",
            "--json",
          ]);
          assert.equal(r.code, 0, r.stderr);
          const j = JSON.parse(r.stdout);
          assert.equal(j.fenced, true);
          assert.match(
            j.reply,
            /^<untrusted_terminal_output id="[0-9a-f]{16}">\nfenced-42\n<\/untrusted_terminal_output>$/,
          );
          assert.ok(!outsideFence(j).includes("fenced-42"), r.stdout);
          const plain = await host.cli(["ask", p, "echo plain-$((6*7)); echo __F__", "--marker", "__F__"]);
          assert.match(
            plain.stdout,
            /^<untrusted_terminal_output id="[0-9a-f]{16}">\nplain-42\n<\/untrusted/,
          );
          // A timeout: the last line seen (the output, while sleep runs) is pane text.
          const { surfaces } = await host.call(
            "surface.list",
          );
          const late = await host.rpc("surface.ask", {
            surface_id: surfaces.find((x) => x.name === p)!.surface_id,
            text: "echo late-$((6*7)); sleep 3",
            marker: "NEVER-SHOWS",
            timeout_ms: 1500,
          });
          const err = late.error as { code: number; message: string; data: { last_seen: string } };
          assert.equal(err.code, -32001, JSON.stringify(late));
          assert.match(err.data.last_seen, /^<untrusted_terminal_output id="[0-9a-f]{16}">\nlate-42/);
          assert.match(err.message, /last seen:\n<untrusted_terminal_output id="[0-9a-f]{16}">\nlate-42/);
          assert.ok(!outsideFence(err).includes("late-42"), JSON.stringify(err));
          await waitUntil("the prompt after sleep 3", async () => (await host.cli(["ready", p])).code === 0, {
            timeoutMs: 15_000,
          });
        },
      );

      await t.step(`${p}: ready while sleep runs, and after`, async () => {
        assert.equal((await host.cli(["ready", p])).code, 0);
        await host.cli(["send", p, "sleep 1.5", "--submit"]);
        const busy = await waitUntil("not ready while sleep runs", async () => {
          const r = await host.cli(["ready", p, "--json"]);
          const j = JSON.parse(r.stdout);
          return r.code === 1 && j.reason === "foreground_job" ? j : null;
        });
        assert.match(busy.detail, /sleep 1\.5/);
        const w = await host.cli(["ready", p, "--wait", "--timeout", "20", "--json"]);
        assert.equal(w.code, 0, w.stdout + w.stderr);
        assert.equal(JSON.parse(w.stdout).reason, "shell_prompt");
        // --wait that runs out of time: exit 4.
        await host.cli(["send", p, "sleep 3", "--submit"]);
        await waitUntil("sleep 3 running", async () => (await host.cli(["ready", p])).code === 1);
        const t4 = await host.cli(["ready", p, "--wait", "--timeout", "0.3"]);
        assert.equal(t4.code, 4);
        assert.equal((await host.cli(["ready", p, "--wait", "--timeout", "20"])).code, 0);
      });

      await t.step(`${p}: clear empties the scrollback and keeps the prompt`, async () => {
        const before = await readPane(host, p, 400);
        assert.match(before, /hello-42/);
        const r = await host.cli(["clear", p]);
        assert.equal(r.code, 0, r.stderr);
        const after = await readPane(host, p, 400);
        assert.doesNotMatch(after, /hello-42|still-working/);
        assert.ok(after.trim().length <= 20, JSON.stringify(after));
        // Still usable, and the next ask starts clean.
        const a = await host.cli(["ask", p, "echo after-clear; echo ZZ", "--marker", "ZZ", "--raw"]);
        assert.equal(a.stdout, "after-clear\n");
        const lines = (await readPane(host, p, 400)).split("\n").filter((l) => l.trim());
        assert.ok(lines.length <= 5, JSON.stringify(lines));
      });
    }

    await t.step("ready --wait outlasts the client's reply deadline (PANEFLOW_TIMEOUT, 5 s)", async () => {
      await host.cli(["send", "sh1", "sleep 6", "--submit"]);
      await waitUntil("sleep 6 running", async () => (await host.cli(["ready", "sh1"])).code === 1);
      const started = Date.now();
      const w = await host.cli(["ready", "sh1", "--wait", "--timeout", "30", "--json"], {
        env: { PANEFLOW_TIMEOUT: "5" },
      });
      assert.equal(w.code, 0, w.stdout + w.stderr);
      assert.equal(JSON.parse(w.stdout).reason, "shell_prompt");
      assert.ok(
        Date.now() - started > 5000,
        `the wait took ${Date.now() - started} ms; sleep 6 had not ended`,
      );
    });

    await t.step("ready: an exited pane is not ready; a continuation prompt is not ready", async () => {
      await host.cli(["send", "sh1", "echo 'open", "--submit"]);
      const r = await waitUntil("continuation", async () => {
        const j = JSON.parse((await host.cli(["ready", "sh1", "--json"])).stdout);
        return j.reason === "continuation_prompt" ? j : null;
      });
      assert.equal(r.ready, false);
      await host.cli(["send", "sh1", "'", "--submit"]);
      await waitUntil("prompt back", async () => (await host.cli(["ready", "sh1"])).code === 0);
      await host.json(["split", "h", "--name", "gone", "-c", "exit 0"]);
      const g = await waitUntil("exited", async () => {
        const j = JSON.parse((await host.cli(["ready", "gone", "--json"])).stdout);
        return j.reason === "exited" ? j : null;
      });
      assert.equal(g.ready, false);
    });

    await t.step("ask is gated like send; bad params are usage errors", async () => {
      const bad = await host.cli(["ask", "sh1", "x"]);
      assert.equal(bad.code, 2);
      const r = await host.rpc("surface.ask", { surface_id: 1, text: "x", marker: "a\nb" });
      assert.equal((r.error as { code: number }).code, -32602);
    });
  });
});

Deno.test("ask is refused without the write gate", async () => {
  await withHost({ scripting: false }, async (host) => {
    await host.json(["new", "--pane-name", "p", "-c", "exec sh"]);
    const r = await host.cli(["ask", "p", "echo x; echo M", "--marker", "M"]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /gated/);
  });
});
