/**
 * Agents without hooks (docs/agents.md): the real Claude Code 2.1.328 in a
 * pane, with no paneflow hooks installed, against the mock Messages API. Its
 * state comes from process detection and screen classification alone
 * (`hooked: false`, `reason: "no_hook"`), seen through `status --json`,
 * `watch`, `explain` and `ps`.
 */
import assert from "node:assert/strict";
import { ensureClaude } from "./_claude.ts";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";
import { type CliChild, spawnCli } from "./_stream.ts";
import {
  approve,
  dialogShown,
  FLEET_FIELDS,
  ok,
  screen,
  startAgent,
  status,
  submit,
  waitScreen,
  waitStatus,
} from "./_agents.ts";

/** `paneflow watch --type agent_state --type ai.exit` of one pane. */
function watchStates(host: TestHost, pane: string) {
  const child: CliChild = spawnCli(
    ["watch", "--surface", pane, "--type", "agent_state", "--type", "ai.exit"],
    host.env,
  );
  const frames = () => child.lines.slice(1).map((l) => JSON.parse(l) as Record<string, unknown>);
  return {
    child,
    frames,
    times: () => child.times.slice(1),
    /** The states of agent_state frames from index `from` on. */
    states: (from = 0) => frames().slice(from).filter((f) => f.type === "agent_state").map((f) => f.state),
    /**
     * Those states once the last is `state`: the watch is a separate process, so
     * its frames may trail a status just polled.
     */
    statesUntil: (from: number, state: string) =>
      waitUntil(`${state} on the watch`, () => {
        const states = frames().slice(from).filter((f) => f.type === "agent_state").map((f) => f.state);
        return states.at(-1) === state && states;
      }),
  };
}

interface Explanation {
  status: Record<string, unknown>;
  process: { pid: number; argv: string[]; family: string | null } | null;
  last_hook: Record<string, unknown> | null;
  hook_state: string | null;
  screen: { rule: string; state: string; message: string | null; note: string; rules_version: string } | null;
  why: string;
}

const NO_HOOK = { hooked: false, reason: "no_hook" } as const;

Deno.test("Claude Code without hooks: state from the screen, ps, explain, an empty fleet", async (t) => {
  await ensureClaude();
  const started = Date.now();
  await withHost({}, async (host) => {
    await t.step('an empty fleet is {"agents":[]} with exit 0; a shell pane is idle', async () => {
      let r = await host.cli(["ps", "--json"]);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(JSON.parse(r.stdout), { agents: [] });
      r = await host.cli(["ps"]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "No agents detected.\n");
      await ok(host, ["new", "--pane-name", "sh"]);
      await host.cli(["wait", "sh", "--idle", "200"]);
      assert.deepEqual(await host.json(["ps", "--json"]), { agents: [] });
      const s = await status(host, "sh");
      assert.equal(s.state, "idle");
      assert.equal(s.tool, null);
      assert.equal(s.pid, null);
      assert.equal(s.hooked, false);
      assert.equal(s.reason, "no_agent");
      assert.match(await ok(host, ["status", "sh"]), /^\d+ \(sh\) idle \[no_agent\]\n$/);
    });

    // The watch starts before the pane exists: `--surface cs` would not resolve yet, so this one
    // watches every pane's agent_state and ai.exit.
    const all = spawnCli(["watch", "--type", "agent_state", "--type", "ai.exit"], host.env);
    await waitUntil("watch's ack", () => all.lines.length >= 1);
    const cs = await startAgent(host, { name: "cs", hooked: false });
    const w = watchStates(host, "cs");
    const timings: Record<string, number | string> = { startup_ms: cs.startupMs };
    try {
      await waitUntil("watch's ack", () => w.child.lines.length >= 1);

      await t.step("process detection, then the screen: unknown_running → idle, no_hook", async () => {
        const s = await waitStatus(
          host,
          "cs",
          "the agent idle",
          (s) => s.tool !== null && s.state === "idle",
        );
        assert.deepEqual({ hooked: s.hooked, reason: s.reason }, NO_HOOK);
        assert.equal(s.tool, "claude");
        assert.equal(s.surface_name, "cs");
        assert.equal(s.surface_id, cs.surfaceId);
        assert.match(await Deno.readTextFile(`/proc/${s.pid}/cmdline`), /claude/);
        const first = all.lines.slice(1).map((l) => JSON.parse(l)).filter((f) =>
          f.surface_id === cs.surfaceId
        );
        assert.equal(first[0]?.state, "unknown_running", JSON.stringify(first));
        assert.equal(first[0]?.reason, "no_hook");
        assert.equal(first[0]?.previous_state, null);
        assert.match(String(first[0]?.why), /looks like claude/);
        assert.equal(first[1]?.state, "idle");
        assert.equal(first[1]?.previous_state, "unknown_running");
      });

      await t.step("ps and ps --json list the agent; explain names the screen rule", async () => {
        const { agents } = await host.json<{ agents: Record<string, unknown>[] }>(["ps", "--json"]);
        assert.equal(agents.length, 1, "the shell pane is not an agent");
        assert.deepEqual(Object.keys(agents[0]).sort(), [...FLEET_FIELDS].sort());
        assert.equal(agents[0].surface_name, "cs");
        assert.equal(agents[0].tool, "claude");
        assert.equal(agents[0].state, "idle");
        const table = (await ok(host, ["ps"])).split("\n");
        assert.match(table[0], /^ID +NAME +WS +TOOL +STATE +COST +TOOL_IN_USE +MESSAGE/);
        assert.match(table[1], new RegExp(`^${cs.surfaceId} +cs +1 +claude +idle\\b`));
        assert.equal(table.filter(Boolean).length, 2);
        const e = await host.json<Explanation>(["explain", "cs", "--json"]);
        assert.equal(e.last_hook, null);
        assert.equal(e.hook_state, null);
        assert.match(e.screen?.rule ?? "", /^idle_(prompt|input)$/);
        assert.equal(e.screen?.rules_version, "2.1.328");
        assert.match(e.why, /^no hook; screen rule "idle_/);
        const text = await ok(host, ["explain", "cs"]);
        assert.match(text, /^pane \d+ \(cs\): idle \(claude, no hooks\)$/m);
        assert.match(text, /hook: +none received/);
        assert.match(text, /screen: +rule "idle_(prompt|input)" → idle .*\(rules for 2\.1\.328\)/);
      });

      await t.step("a turn: thinking from the busy line, then finished", async () => {
        const from = w.frames().length;
        cs.mock.enqueue({ kind: "hold", text: "Working on it.\n", after: "All done." });
        const r = await submit(host, "cs", "do the thing");
        assert.equal(r.status, "submitted", r.evidence);
        timings.submit_ms = r.elapsed_ms;
        const s = await waitStatus(host, "cs", "thinking", (s) => s.state === "thinking");
        assert.deepEqual({ hooked: s.hooked, reason: s.reason }, NO_HOOK);
        assert.equal(s.message, null);
        const e = await host.json<Explanation>(["explain", "cs", "--json"]);
        assert.equal(e.screen?.rule, "busy");
        await waitUntil("the request held by the mock", () => cs.mock.holding() === 1);
        cs.mock.release();
        const f = await waitStatus(host, "cs", "finished", (s) => s.state === "finished");
        assert.deepEqual({ hooked: f.hooked, reason: f.reason }, NO_HOOK);
        assert.equal(f.last_result, null, "without a Stop hook there is no last_result");
        assert.match(await screen(host, "cs"), /All done\./);
        assert.deepEqual(await w.statesUntil(from, "finished"), ["thinking", "finished"]);
      });

      await t.step("a permission dialog: waiting_for_input with the dialog's question; approve", async () => {
        const from = w.frames().length;
        cs.mock.enqueue({
          kind: "bash",
          command: "touch screen-marker.txt",
          description: "Create a marker file",
          then: "Created the marker file.",
        });
        assert.equal((await submit(host, "cs", "create the marker file")).status, "submitted");
        const s1 = await waitStatus(host, "cs", "waiting_for_input", (s) => s.state === "waiting_for_input");
        assert.deepEqual({ hooked: s1.hooked, reason: s1.reason }, NO_HOOK);
        assert.equal(s1.message, "Bash command: touch screen-marker.txt — Do you want to proceed?");
        const s2 = await waitStatus(
          host,
          "cs",
          "waiting_ms to grow",
          (s) => s.waiting_ms >= s1.waiting_ms + 200,
        );
        assert.equal(s2.message, s1.message);
        timings.presses_to_approve = await approve(host, "cs");
        const f = await waitStatus(host, "cs", "finished", (s) => s.state === "finished");
        assert.equal(f.message, null);
        assert.equal(cs.mock.requests.at(-1)?.answered, "followup", "the mock got the tool_result");
        assert.equal(cs.mock.requests.at(-1)?.toolResults?.[0]?.is_error, false);
        assert.ok((await Deno.stat(`${cs.setup.projectDir}/screen-marker.txt`)).isFile);
        const states = await w.statesUntil(from, "finished");
        assert.ok(states.indexOf("waiting_for_input") > states.indexOf("thinking"), states.join(" "));
      });

      await t.step("a refused dialog (key esc): waiting_for_input, Interrupted", async () => {
        cs.mock.enqueue({ kind: "bash", command: "touch refused.txt", then: "Never shown." });
        assert.equal((await submit(host, "cs", "create another file")).status, "submitted");
        await waitScreen(host, "cs", "the dialog", dialogShown);
        await waitStatus(host, "cs", "the dialog to settle", (s) => s.waiting_ms >= 250);
        await ok(host, ["key", "cs", "esc"]);
        const s = await waitStatus(
          host,
          "cs",
          "the refusal",
          (s) => s.state === "waiting_for_input" && /Interrupted/.test(s.message ?? ""),
        );
        assert.deepEqual({ hooked: s.hooked, reason: s.reason }, NO_HOOK);
        assert.equal(s.message, "Interrupted · What should Claude do instead?");
      });

      await t.step("an API error gives errored with the error as message", async () => {
        cs.mock.enqueue({ kind: "error", status: 500 });
        assert.equal((await submit(host, "cs", "this request fails")).status, "submitted");
        const s = await waitStatus(host, "cs", "errored", (s) => s.state === "errored");
        assert.deepEqual({ hooked: s.hooked, reason: s.reason }, NO_HOOK);
        assert.match(s.message ?? "", /^API Error: 500 Internal server error\./);
        const e = await host.json<Explanation>(["explain", "cs", "--json"]);
        assert.equal(e.screen?.rule, "api_error");
      });

      await t.step("interrupts with key escape leave thinking within 1 s", async () => {
        for (
          const [label, reply] of [
            ["after output", { kind: "hold", text: "Partial answer before the interrupt.\n" }],
            // Claude Code shows no Interrupted line for this one: it puts the prompt back into the
            // input box. Only the Esc that paneflow delivered tells it from a finished turn.
            ["before output", { kind: "hold" }],
          ] as const
        ) {
          // A finished turn first, so no old Interrupted line is in the last turn.
          cs.mock.enqueue({ kind: "text", text: `Ready for ${label}.` });
          assert.equal((await submit(host, "cs", `get ready ${label}`)).status, "submitted");
          await waitStatus(host, "cs", "finished", (s) => s.state === "finished");
          cs.mock.enqueue(reply);
          assert.equal((await submit(host, "cs", `hold the reply ${label}`)).status, "submitted");
          if (reply.text) {
            await waitScreen(host, "cs", "the partial answer", (s) => s.includes("Partial answer"));
          } else await waitUntil("the request held by the mock", () => cs.mock.holding() === 1);
          await waitStatus(host, "cs", "thinking", (s) => s.state === "thinking");
          const from = w.frames().length;
          const t0 = performance.now();
          await ok(host, ["key", "cs", "escape"]);
          const i = await waitUntil("the agent_state event", () => {
            const i = w.frames().findIndex((f, i) => i >= from && f.type === "agent_state");
            return i >= 0 ? i + 1 : false;
          }, { timeoutMs: 3000, intervalMs: 5 }) - 1;
          const ms = Math.round(w.times()[i] - t0);
          timings[`interrupt_${label.replace(" ", "_")}_ms`] = ms;
          const left = w.frames()[i];
          assert.equal(left.previous_state, "thinking");
          assert.equal(left.state, "waiting_for_input", JSON.stringify(left));
          assert.equal(left.reason, "no_hook");
          assert.match(String(left.message), /Interrupted/);
          assert.ok(ms < 1000, `left thinking ${ms} ms after the key verb started`);
          cs.mock.release();
          if (!reply.text) {
            await waitScreen(
              host,
              "cs",
              "the prompt back in the input box",
              (s) => /^❯\u00a0hold the reply/m.test(s),
            );
            // Clearing the input box does not make the interrupted turn look finished.
            await ok(host, ["key", "cs", "ctrl-u"]);
            await waitScreen(host, "cs", "an empty input box", (s) => /^❯\u00a0$/m.test(s));
            const s = await waitUntil("the screen classified again", async () => {
              const e = await host.json<Explanation>(["explain", "cs", "--json"]);
              return e.screen?.rule === "idle_prompt" && e.status;
            });
            assert.equal(s.state, "waiting_for_input");
          }
        }
      });

      await t.step("a prompt sent while busy reports queued, and the state stays thinking", async () => {
        cs.mock.enqueue({ kind: "hold", text: "Working on the first.\n" }, {
          kind: "text",
          text: "The queued one.",
        });
        assert.equal((await submit(host, "cs", "first, held")).status, "submitted");
        await waitScreen(host, "cs", "the first answer", (s) => s.includes("Working on the first."));
        await waitStatus(host, "cs", "thinking", (s) => s.state === "thinking");
        const from = w.frames().length;
        const r = await submit(host, "cs", "queued while busy");
        assert.equal(r.status, "queued", r.evidence);
        assert.equal(r.submitted, true);
        // The draft in the input box hides `esc to interrupt`; the spinner line still says busy.
        assert.deepEqual(w.states(from), [], "no state change while the prompt was queued");
        await waitScreen(host, "cs", "the queued notice", (s) => /Queued/.test(s));
        cs.mock.release();
        await waitScreen(host, "cs", "the queued answer", (s) => s.includes("The queued one."));
        await waitStatus(host, "cs", "finished", (s) => s.state === "finished");
        const prompts = cs.mock.prompts().slice(-2);
        assert.deepEqual(prompts.map((p) => p.texts), [["first, held"], ["queued while busy"]]);
      });

      await t.step("/exit: ai.exit, the pane's status is idle and the fleet empty", async () => {
        const from = w.frames().length;
        const r = await submit(host, "cs", "/exit");
        assert.equal(r.status, "submitted", r.evidence);
        timings.exit_submit_ms = r.elapsed_ms;
        const exit = await waitUntil(
          "ai.exit",
          () => w.frames().slice(from).find((f) => f.type === "ai.exit"),
          {
            timeoutMs: 15_000,
          },
        );
        assert.equal(exit.state, "idle");
        assert.equal(exit.tool, "claude");
        // Process detection usually sees claude gone before the pane's exit is reported; the
        // exit code is known only when the pane's exit comes first.
        assert.ok(exit.exit_code === null || exit.exit_code === 0, `exit_code ${exit.exit_code}`);
        const s = await status(host, "cs");
        assert.equal(s.state, "idle");
        assert.equal(s.tool, null);
        assert.equal(s.pid, null);
        assert.match(s.reason, /^(exited|no_agent)$/);
        const r2 = await host.cli(["ps", "--json"]);
        assert.equal(r2.code, 0);
        assert.deepEqual(JSON.parse(r2.stdout), { agents: [] });
      });
      console.log(`timings: ${JSON.stringify(timings)}`);
    } finally {
      for (const c of [w.child, all]) {
        c.kill();
        await c.status;
      }
      await cs.dispose();
    }
  });
  const total = Date.now() - started;
  assert.ok(total < 60_000, `took ${total} ms`);
});

Deno.test("agents: status and ps know an agent the moment it runs, not at the next scan", async () => {
  await withHost({}, async (host) => {
    // Detection reads argv, so bash's `exec -a claude` makes a claude out of sleep: one
    // the pane's program becomes, and one its shell runs as a child. The delay lets
    // the detection done when a pane is created see only the shell.
    const panes: Record<string, string> = {
      execd: `exec bash -c 'sleep 0.3; exec -a claude sleep 60'`,
      child: `exec bash -c 'sleep 0.3; (exec -a claude sleep 60); true'`,
    };
    const ids: Record<string, number> = {};
    for (const [name, command] of Object.entries(panes)) {
      ids[name] =
        (await host.json<{ surface_id: number }>(["new", "--pane-name", name, "-c", command])).surface_id;
    }
    await waitUntil("a claude in each pane", async () => {
      const { surfaces } = await host.call(
        "surface.list",
      );
      for (const p of surfaces) {
        const children = await Deno.readTextFile(`/proc/${p.pid}/task/${p.pid}/children`).catch(() => "");
        const pids = [p.pid, ...children.split(" ").filter(Boolean)];
        const argvs = await Promise.all(
          pids.map((pid) => Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "")),
        );
        if (!argvs.some((a) => a.startsWith("claude\0"))) return false;
      }
      return surfaces.length === 2;
    }, { intervalMs: 5 });
    // The periodic scan runs once a second; each of these must find the agent itself.
    for (const name of Object.keys(panes)) {
      const s = await status(host, name);
      assert.deepEqual([s.tool, s.reason], ["claude", "no_hook"], name);
    }
    const { agents } = await host.json<{ agents: { surface_id: number; tool: string }[] }>(["ps", "--json"]);
    assert.deepEqual(agents.map((a) => [a.surface_id, a.tool]), [[ids.execd, "claude"], [
      ids.child,
      "claude",
    ]]);
  });
});
