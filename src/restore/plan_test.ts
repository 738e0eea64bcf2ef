import assert from "node:assert/strict";
import type { JournalPane } from "../spec/restore.ts";
import { isShell, planPane, type Probe, resumeArgv, shown } from "./plan.ts";

const probe = (over: Partial<Probe> = {}): Probe => ({
  isDir: (p) => p === "/" || p.startsWith("/src"),
  runnable: () => true,
  knowsSession: () => true,
  ...over,
});

const pane = (over: Partial<JournalPane> = {}): JournalPane => ({
  surface_id: 1,
  name: "p",
  argv: ["/bin/bash"],
  env: { FOO: "1" },
  cwd: "/src/app",
  foreground: null,
  agent: null,
  restart: false,
  exit_code: null,
  history: null,
  up: null,
  ...over,
});

const plan = (p: JournalPane, pr = probe()) => planPane(p, { shell: "/bin/sh", probe: pr, historyLines: 0 });

Deno.test("resumeArgv: each agent's own resume, every other flag kept, an older resume dropped", () => {
  assert.deepEqual(
    resumeArgv("claude", ["claude", "--model", "opus", "-r", "old", "--settings", "s.json"], "new"),
    [
      "claude",
      "--resume",
      "new",
      "--model",
      "opus",
      "--settings",
      "s.json",
    ],
  );
  assert.deepEqual(resumeArgv("claude", ["claude", "--continue", "--resume=old"], "id"), [
    "claude",
    "--resume",
    "id",
  ]);
  assert.deepEqual(resumeArgv("codex", ["codex", "-m", "o3"], "t1"), ["codex", "resume", "t1", "-m", "o3"]);
  assert.deepEqual(resumeArgv("codex", ["codex", "resume", "old", "-m", "o3"], "t1"), [
    "codex",
    "resume",
    "t1",
    "-m",
    "o3",
  ]);
  assert.deepEqual(resumeArgv("gemini", ["node", "/x/gemini", "-m", "flash"], "g"), [
    "node",
    "/x/gemini",
    "--resume",
    "g",
    "-m",
    "flash",
  ]);
  assert.deepEqual(resumeArgv("opencode", ["opencode", "-c"], "o"), ["opencode", "--session", "o"]);
  assert.equal(resumeArgv("aider", ["aider"], "x"), null);
});

Deno.test("isShell and shown", () => {
  assert.ok(isShell(["/bin/bash"]) && isShell(["-zsh"]) && isShell(["bash", "-l"]));
  assert.ok(!isShell(["/bin/sh", "-c", "vim"]) && !isShell(["vim"]));
  assert.equal(shown(["/bin/sh", "-c", "vim x.txt"]), "vim x.txt");
  assert.equal(shown(["less", "a b"]), "less 'a b'");
});

Deno.test("planPane: a shell comes back as itself in its cwd, with a note of what ran in front", () => {
  const s = plan(pane({ foreground: ["less", "README.md"] }));
  assert.deepEqual(s.argv, ["/bin/bash"]);
  assert.equal(s.plan.how, "shell");
  assert.equal(s.plan.cwd, "/src/app");
  assert.equal(s.plan.note, 'paneflow: "less README.md" ran here before the restore');
  assert.deepEqual(s.env, { FOO: "1" });
});

Deno.test("planPane: another program comes back as a shell with a note, or again with restart", () => {
  const s = plan(pane({ argv: ["/bin/sh", "-c", "npm run dev"] }));
  assert.deepEqual(s.argv, ["/bin/sh"]);
  assert.equal(s.plan.note, 'paneflow: "npm run dev" ran here before the restore (not restarted)');
  const r = plan(pane({ argv: ["/bin/sh", "-c", "npm run dev"], restart: true }));
  assert.equal(r.plan.how, "restart");
  assert.deepEqual(r.argv, ["/bin/sh", "-c", "npm run dev"]);
});

Deno.test("planPane: an agent resumes its conversation; in a shell pane the shell follows", () => {
  const agent = { tool: "claude", session_id: "abc", argv: ["/opt/claude", "--model", "m"] };
  const s = plan(pane({ argv: ["/bin/sh", "-c", "/opt/claude --model m"], agent }));
  assert.equal(s.plan.how, "resume");
  assert.deepEqual(s.argv, ["/opt/claude", "--resume", "abc", "--model", "m"]);
  assert.equal(s.then, null);
  const inShell = plan(pane({ agent }));
  assert.equal(inShell.then, "/bin/bash");
  const noId = plan(pane({ agent: { ...agent, session_id: null } }));
  assert.equal(noId.plan.how, "same");
  assert.deepEqual(noId.argv, agent.argv);
  assert.match(noId.plan.note!, /no conversation id was recorded/);
});

Deno.test("planPane: bad input comes back as a shell with the reason", () => {
  const agent = { tool: "claude", session_id: "abc", argv: ["/opt/claude"] };
  const gone = plan(
    pane({ cwd: "/src/gone/deeper", agent }),
    probe({ isDir: (p) => p === "/src" || p === "/" }),
  );
  assert.equal(gone.plan.how, "shell");
  assert.equal(gone.plan.cwd, "/src");
  assert.match(gone.plan.problem!, /^its directory "\/src\/gone\/deeper" no longer exists/);
  assert.match(gone.plan.note!, /^paneflow: not restored as it was: /);
  const uninstalled = plan(pane({ agent }), probe({ runnable: () => false }));
  assert.equal(uninstalled.plan.problem, 'the agent\'s command "/opt/claude" is no longer installed');
  assert.deepEqual(uninstalled.argv, ["/bin/bash"]);
  const forgotten = plan(pane({ agent }), probe({ knowsSession: () => false }));
  assert.equal(forgotten.plan.problem, 'claude no longer has the conversation "abc"');
  const plainGone = plan(pane({ cwd: "/nowhere" }), probe({ isDir: (p) => p === "/" }));
  assert.equal(plainGone.plan.cwd, "/");
  assert.equal(plainGone.plan.problem, 'its directory "/nowhere" no longer exists');
  const wt = plan(
    pane({
      cwd: "/src/repo.worktrees/feat/lib",
      up: { title: "t", index: 0, port: null, worktree: "/src/repo.worktrees/feat" },
    }),
    probe({ isDir: (p) => p === "/src/repo" || p === "/" }),
  );
  assert.equal(wt.plan.cwd, "/src/repo");
  assert.equal(
    wt.plan.problem,
    'its worktree "/src/repo.worktrees/feat" was removed; it starts in the repository',
  );
});
