import assert from "node:assert/strict";
import { branchProblem, checkWorkspace, expandDir, findRepoRoot, formatPath } from "./check.ts";

const env = (vars: Record<string, string>) => ({ get: (k: string) => vars[k] });

Deno.test("expandDir expands ~ and $VAR, and names what is missing", () => {
  assert.deepEqual(expandDir("~/x/$P", env({ HOME: "/h", P: "p" })), { path: "/h/x/p" });
  assert.deepEqual(expandDir("~", env({ HOME: "/h" })), { path: "/h" });
  assert.deepEqual(expandDir("$NOPE/x", env({})), { problem: `variable $NOPE in "$NOPE/x" is not set` });
  assert.deepEqual(expandDir("~/x", env({})), { problem: `cannot expand "~": HOME is not set` });
});

Deno.test("branchProblem follows git's ref rules", () => {
  for (const ok of ["main", "feat/x-1", "v1.2", "a_b"]) assert.equal(branchProblem(ok), null, ok);
  for (
    const bad of ["-x", "a b", "a..b", "a~1", "x.lock", "/x", "x/", "a//b", ".hidden", "a/.b", "@", "a@{1}"]
  ) {
    assert.notEqual(branchProblem(bad), null, bad);
  }
});

Deno.test("formatPath reads like TOML", () => {
  assert.equal(formatPath(["panes", 2, "env", "PORT"]), "panes[2].env.PORT");
  assert.equal(formatPath(["panes", 0, "env", "A B"]), 'panes[0].env."A B"');
  assert.equal(formatPath([]), "(top level)");
});

Deno.test("findRepoRoot: the main worktree from a subdirectory and from a linked worktree", async () => {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "pfr-" }));
  try {
    const git = (cwd: string, ...args: string[]) =>
      new Deno.Command("git", { args: ["-c", "user.email=t@e", "-c", "user.name=t", ...args], cwd }).output();
    await Deno.mkdir(`${dir}/repo/a/b`, { recursive: true });
    await git(`${dir}/repo`, "init", "-q");
    await git(`${dir}/repo`, "commit", "-q", "--allow-empty", "-m", "x");
    await git(`${dir}/repo`, "worktree", "add", "-q", "-b", "w", `${dir}/linked`);
    assert.equal(findRepoRoot(`${dir}/repo/a/b`), `${dir}/repo`);
    assert.equal(findRepoRoot(`${dir}/linked`), `${dir}/repo`);
    assert.equal(findRepoRoot(dir), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("checkWorkspace without a base directory (workspace.up params) needs absolute cwds", () => {
  const { issues } = checkWorkspace({ panes: [{ cwd: "rel" }, {}] }, { env: env({}) });
  assert.deepEqual(issues, [
    { path: ["panes", 0, "cwd"], message: `"rel" must be an absolute path` },
    { path: ["panes", 1, "cwd"], message: "is required (an absolute path)" },
  ]);
  const ok = checkWorkspace({ name: "w", panes: [{ cwd: "/", env: { N: 1 } }] }, { env: env({}) });
  assert.deepEqual(ok.issues, []);
  assert.equal(ok.workspace?.panes[0].env.N, "1");
});
