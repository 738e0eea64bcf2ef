/**
 * Restore of `up` workspaces (docs/restore.md): after SIGKILL, a host that
 * restores at start keeps the worktrees its panes work in (instead of
 * pruning them as orphans), a pane whose worktree was removed meanwhile
 * starts in the repository with the reason on screen, and `up` of the same
 * spec afterwards reuses the restored panes instead of clashing with them.
 *
 * @module
 */
import assert from "node:assert/strict";
import { exists, startHost, waitUntil } from "./_harness.ts";

async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", {
    args: ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args],
    cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${dec.decode(out.stderr)}`);
  return dec.decode(out.stdout);
}

Deno.test("restore: up workspaces come back with their worktrees; a removed one starts in the repository; up stays idempotent", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "pf-ru-" }));
  const run = `${root}/run`;
  const repo = `${root}/repo`;
  await Deno.mkdir(run);
  await Deno.mkdir(repo);
  await git(repo, "init", "-q", "-b", "main");
  await Deno.writeTextFile(`${repo}/README`, "r\n");
  await git(repo, "add", ".");
  await git(repo, "commit", "-q", "-m", "init");
  const spec = `${root}/team.toml`;
  await Deno.writeTextFile(
    spec,
    `name = "team"\n[[panes]]\nname = "kept"\ncwd = "repo"\nworktree = "feat-kept"\n` +
      `[[panes]]\nname = "lost"\ncwd = "repo"\nworktree = "feat-lost"\n`,
  );
  const env = { XDG_STATE_HOME: `${root}/state` };
  const start = () => startHost({ dir: run, config: JSON.stringify({ restore: "on" }), env });
  let host = await start();
  try {
    const first = await host.cli(["up", spec, "--json"]);
    assert.equal(first.code, 0, first.stderr);
    const cwdOf = async (name: string) => {
      const { surfaces } = await host.call("surface.list");
      return surfaces.find((s) => s.name === name)?.cwd;
    };
    await waitUntil("the journal to hold both up panes", async () => {
      const dir = `${root}/state/paneflow/journals`;
      for (const e of Deno.readDirSync(dir)) {
        if (!e.name.endsWith(".json")) continue;
        const text = await Deno.readTextFile(`${dir}/${e.name}`);
        if (text.includes(`${repo}.worktrees/feat-kept`) && text.includes(`${repo}.worktrees/feat-lost`)) {
          return true;
        }
      }
      return false;
    }, { timeoutMs: 10_000, intervalMs: 100 });

    Deno.kill(host.pid, "SIGKILL");
    await host.stop();
    await git(repo, "worktree", "remove", "--force", `${repo}.worktrees/feat-lost`);
    host = await start();

    await waitUntil("the restored panes", async () => (await cwdOf("kept")) && (await cwdOf("lost")));
    assert.ok(await exists(`${repo}.worktrees/feat-kept`), "a restoring host does not prune the worktree");
    assert.equal(await cwdOf("kept"), `${repo}.worktrees/feat-kept`);
    assert.equal(await cwdOf("lost"), repo);
    await waitUntil("the reason on the lost pane's screen", async () => {
      const r = await host.cli(["read", "lost", "--raw", "--join"]);
      return r.stdout.includes(
        `its worktree "${repo}.worktrees/feat-lost" was removed; it starts in the repository`,
      );
    });

    // `up` again: the restored panes are the spec's, reused, not a name clash.
    const again = await host.cli(["up", spec, "--json"]);
    assert.equal(again.code, 0, again.stderr);
    const { surfaces } = await host.call("surface.list");
    assert.deepEqual(surfaces.map((s) => s.name).sort(), ["kept", "lost"]);
    const { workspaces } = await host.call("workspace.list");
    assert.deepEqual(workspaces.map((w) => w.title), ["team"]);
  } catch (e) {
    console.error(`--- host log ---\n${host.log()}--- end host log ---`);
    throw e;
  } finally {
    await host.stop();
    await Deno.remove(root, { recursive: true }).catch(() => {});
    await Deno.remove(`${repo}.worktrees`, { recursive: true }).catch(() => {});
  }
});
