/**
 * Hook frames belong to their pane. A frame for a surface
 * is accepted only with that pane's PANEFLOW_PANE_TOKEN (which `paneflow
 * ai-hook` inside the pane sends); a forged one, from any connection or
 * from another pane, is refused with a clear error and counted in
 * `explain`. system.shutdown is gated as strictly as keystrokes.
 */
import assert from "node:assert/strict";
import { paneflowCommand } from "./_claude.ts";
import { readPane, waitUntil, withHost } from "./_harness.ts";

interface Explain {
  last_hook: { method: string; params: Record<string, unknown> } | null;
  refused_hook_frames: number;
  refused_calls: { count: number; last: { capability: string } | null };
}

Deno.test("hooks: forged ai.* frames are refused and counted; the pane's own ai-hook is accepted", async () => {
  await withHost({ scripting: false }, async (host) => {
    const pf = paneflowCommand();
    const victim = (await host.call("workspace.create", {
      pane_name: "victim",
      command: "exec sleep 600",
    })).surface_id;
    const explain = () => host.call("surface.explain", { surface_id: victim });

    // Any connection, no token: refused.
    const bare = await host.rpc("ai.prompt_submit", {
      surface_id: victim,
      tool: "claude",
      event: "UserPromptSubmit",
    });
    const err = bare.error as { code: number; message: string; data: { reason: string } };
    assert.equal(err.code, -32001);
    assert.equal(err.data.reason, "hook_token");
    assert.match(err.message, /^ai\.prompt_submit refused: the frame carries no pane token for surface \d+/);
    // A guessed token: refused.
    const guessed = await host.rpc("ai.stop", { surface_id: victim, tool: "claude", token: "0".repeat(32) });
    assert.match((guessed.error as { message: string }).message, /carries the wrong pane token/);

    // Another pane's program posts for the victim with its own (valid, but not the victim's) token.
    await host.call("surface.split", {
      surface_id: victim,
      direction: "h",
      name: "attacker",
      command:
        `echo '{"prompt":"forged"}' | PANEFLOW_SURFACE_ID=${victim} ${pf} ai-hook UserPromptSubmit; echo ATTACK-DONE; exec sleep 600`,
    });
    await waitUntil(
      "the attacker's hook to run",
      async () => (await readPane(host, "attacker")).includes("ATTACK-DONE"),
      {
        timeoutMs: 20_000,
      },
    );
    // The attacker is another pane: its frame for the victim is refused for want of the `hook`
    // capability over the victim (a pane posts hooks for itself only) before any token is looked at.
    const after = await waitUntil("two token refusals and one capability refusal counted", async () => {
      const e = await explain();
      return e.refused_hook_frames === 2 && e.refused_calls.count === 1 && e;
    });
    assert.equal(after.refused_calls.last?.capability, "hook");
    assert.equal(after.last_hook, null, "no forged frame reached the tracker");
    const human = await host.cli(["explain", "victim"]);
    assert.match(human.stdout, /^ {2}refused: 2 hook frame\(s\) without this pane's token/m);
    assert.equal(
      (await host.call("surface.status", { surface_id: victim })).state !== "thinking",
      true,
    );

    // The pane's own hook, with its own token, is accepted (and the token is not shown back).
    await host.call("surface.split", {
      surface_id: victim,
      direction: "v",
      name: "own",
      command: `echo '{"prompt":"real"}' | ${pf} ai-hook UserPromptSubmit; echo OWN-DONE; exec sleep 600`,
    });
    const own = (await host.call("surface.list")).surfaces
      .find((s) => s.name === "own")!.surface_id;
    const accepted = await waitUntil("the pane's own frame", async () => {
      const e = await host.call("surface.explain", { surface_id: own });
      return e.last_hook && e;
    }, { timeoutMs: 20_000 });
    assert.equal(accepted.last_hook!.method, "ai.prompt_submit");
    assert.equal(accepted.last_hook!.params.prompt, "real");
    assert.ok(!("token" in accepted.last_hook!.params), JSON.stringify(accepted.last_hook));
    assert.equal(accepted.refused_hook_frames, 0);

    // system.shutdown: gated like keystrokes; the host stays up.
    const shut = await host.rpc("system.shutdown");
    const shutErr = shut.error as { message: string; data: { reason: string } };
    assert.equal(shutErr.data.reason, "gated");
    assert.match(shutErr.message, /PANEFLOW_IPC_SCRIPTING=1.*or stop it with SIGTERM \(kill \d+\)/);
    assert.equal((await host.call("system.ping")).pong, true);
  });
});
