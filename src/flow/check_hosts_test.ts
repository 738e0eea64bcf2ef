import assert from "node:assert/strict";
import { checkFlow } from "./check.ts";

const base = { baseDir: "/tmp", hosts: ["gpu", "build"] };

function messages(raw: unknown, opts = base): string[] {
  return checkFlow(raw, opts).issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}

Deno.test("flow host: a configured name or local; unknown names are an error at the step's host", () => {
  const { plan, issues } = checkFlow({
    step: [
      { id: "a", host: "gpu", pane: { command: "cat", cwd: "~/src" } },
      { id: "b", host: "local", pane: { command: "cat" } },
      { id: "c", needs: ["a"], send: { target: "a", text: "hi" } },
      { id: "d", host: "build", pane: { command: "cat" } },
    ],
  }, base);
  assert.deepEqual(issues, []);
  const byKey = Object.fromEntries(plan!.steps.map((s) => [s.key, s]));
  assert.equal(byKey.a.host, "gpu");
  assert.equal(byKey.b.host, null);
  // A send acts on its target's host.
  assert.equal(byKey.c.host, "gpu");
  // The remote cwd is left for that machine; a missing one is its home.
  assert.equal(byKey.a.pane!.cwd, "~/src");
  assert.equal(byKey.d.pane!.cwd, "~");
  assert.deepEqual(plan!.hosts, ["gpu", "build"]);

  assert.deepEqual(messages({ step: [{ id: "x", host: "gpux", pane: { command: "cat" } }] }), [
    `step.0.host: no host "gpux" in the config's "hosts" (known: gpu, build); "local" is this machine`,
  ]);
  assert.match(
    messages({ step: [{ id: "x", host: "gpu", pane: { command: "cat" } }] }, {
      baseDir: "/tmp",
      hosts: [],
    })[0],
    /no host "gpu" in the config's "hosts" \(add hosts\.<name> = \{ssh: "user@box"\}\)/,
  );
});

Deno.test("flow host: a remote pane's directory, worktree and agent are not checked here; a relative cwd is an error; host on a send is refused", () => {
  // A directory and a worktree that do not exist on this machine, an agent not known here.
  const { issues } = checkFlow({
    step: [{
      id: "a",
      host: "gpu",
      pane: { agent: "remote-only", cwd: "/no/such/dir/here", worktree: "feat/x", copy_env: true },
    }],
  }, { ...base, agents: ["claude"] });
  assert.deepEqual(issues, []);
  // The same pane on this machine is checked.
  assert.ok(
    checkFlow({ step: [{ id: "a", pane: { agent: "remote-only", cwd: "/no/such/dir/here" } }] }, {
      ...base,
      agents: ["claude"],
    }).issues.length >= 2,
  );
  // What does not depend on the machine is checked here: a branch name, worktree-only fields.
  assert.deepEqual(
    messages({ step: [{ id: "a", host: "gpu", pane: { command: "cat", worktree: "a..b" } }] }),
    [
      `step.0.pane.worktree: "a..b" is not a valid branch name: cannot contain ".."`,
    ],
  );
  assert.match(
    messages({ step: [{ id: "a", host: "gpu", pane: { command: "cat", copy_env: true } }] })[0],
    /^step\.0\.pane\.copy_env: only applies with "worktree"/,
  );
  assert.deepEqual(messages({ step: [{ id: "a", host: "gpu", pane: { command: "cat", cwd: "src" } }] }), [
    `step.0.pane.cwd: "src" is relative: a step on host "gpu" needs a directory of that machine ("/…", "~/…" or "$VAR/…")`,
  ]);
  assert.deepEqual(
    messages({
      step: [
        { id: "a", host: "gpu", pane: { command: "cat" } },
        { id: "b", host: "gpu", needs: ["a"], send: { target: "a", text: "x" } },
      ],
    }),
    [
      `step.1.host: a send goes to its target's pane, on that step's host; "host" belongs on the step with the pane`,
    ],
  );
});
