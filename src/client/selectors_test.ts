import assert from "node:assert/strict";
import { CliFailure, UsageError } from "../errors.ts";
import { matchPanes, type PaneInfo, pickOne } from "./selectors.ts";
import { paneInfo } from "./_pane_fixture.ts";

function pane(surface_id: number, name: string | null, cmd: string, cwd: string): PaneInfo {
  return paneInfo({ surface_id, name, cmd, cwd, workspace: surface_id > 3 ? 1 : 0 });
}

function ids(panes: PaneInfo[]): number[] {
  return panes.map((p) => p.surface_id);
}

async function withTempDir(fn: (dir: string) => Promise<void> | void) {
  const dir = Deno.realPathSync(await Deno.makeTempDir({ prefix: "paneflow_sel_" }));
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const PANES = [
  pane(1, "web", "npm run dev", "/srv/web"),
  pane(2, "api", "cargo run --bin api", "/srv/api"),
  pane(3, null, "bash", "/srv/web"),
  pane(12, "12b", "claude --model opus", "/"),
  pane(21, "logs", "tail -f /var/log/syslog", "/var/log"),
];

Deno.test("matchPanes: a number is an exact surface_id", () => {
  assert.deepEqual(ids(matchPanes("1", PANES)), [1]);
  assert.deepEqual(ids(matchPanes("12", PANES)), [12]);
  assert.deepEqual(ids(matchPanes("2", PANES)), [2], "2 must not match 12 or 21");
  assert.deepEqual(ids(matchPanes("99", PANES)), []);
  assert.deepEqual(ids(matchPanes("012", PANES)), [12]);
});

Deno.test("matchPanes: anything else is an exact name", () => {
  assert.deepEqual(ids(matchPanes("web", PANES)), [1]);
  assert.deepEqual(ids(matchPanes("12b", PANES)), [12]);
  assert.deepEqual(ids(matchPanes("we", PANES)), []);
  assert.deepEqual(ids(matchPanes("WEB", PANES)), []);
  assert.deepEqual(ids(matchPanes("-1", PANES)), []);
});

Deno.test("matchPanes: cmdline: matches a substring of the argv", () => {
  assert.deepEqual(ids(matchPanes("cmdline:run", PANES)), [1, 2]);
  assert.deepEqual(ids(matchPanes("cmdline:--model opus", PANES)), [12]);
  assert.deepEqual(ids(matchPanes("cmdline:/var/log", PANES)), [21]);
  assert.deepEqual(ids(matchPanes("cmdline:zsh", PANES)), []);
});

Deno.test("matchPanes: cwd: matches the directory exactly", () => {
  assert.deepEqual(ids(matchPanes("cwd:/srv/web", PANES)), [1, 3]);
  assert.deepEqual(ids(matchPanes("cwd:/srv/web/", PANES)), [1, 3]);
  assert.deepEqual(ids(matchPanes("cwd:/srv/web//", PANES)), [1, 3]);
  assert.deepEqual(ids(matchPanes("cwd:/srv", PANES)), []);
  assert.deepEqual(ids(matchPanes("cwd:/", PANES)), [12]);
});

Deno.test("matchPanes: cwd: resolves relative paths, ~ and symlinks", async () => {
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/proj`);
    await Deno.symlink(`${dir}/proj`, `${dir}/link`);
    const panes = [pane(5, null, "sh", `${dir}/proj`), pane(6, null, "sh", dir)];
    const before = Deno.cwd();
    const home = Deno.env.get("HOME");
    try {
      Deno.chdir(dir);
      assert.deepEqual(ids(matchPanes("cwd:proj", panes)), [5]);
      assert.deepEqual(ids(matchPanes("cwd:proj/", panes)), [5]);
      assert.deepEqual(ids(matchPanes("cwd:./proj", panes)), [5]);
      assert.deepEqual(ids(matchPanes("cwd:.", panes)), [6]);
      assert.deepEqual(ids(matchPanes("cwd:proj/..", panes)), [6]);
      assert.deepEqual(ids(matchPanes("cwd:link", panes)), [5]);
      Deno.env.set("HOME", dir);
      assert.deepEqual(ids(matchPanes("cwd:~/proj", panes)), [5]);
      assert.deepEqual(ids(matchPanes("cwd:~", panes)), [6]);
    } finally {
      Deno.chdir(before);
      if (home === undefined) Deno.env.delete("HOME");
      else Deno.env.set("HOME", home);
    }
  });
});

Deno.test("matchPanes: an empty selector or prefix is a usage error", () => {
  for (
    const [selector, message] of [
      ["", "Empty selector"],
      ["cmdline:", `Selector "cmdline:" needs a substring`],
      ["cwd:", `Selector "cwd:" needs a path`],
    ]
  ) {
    assert.throws(() => matchPanes(selector, PANES), (e: unknown) => {
      assert.ok(e instanceof UsageError);
      assert.equal(e.message, message);
      return true;
    });
  }
});

Deno.test("pickOne returns the single match", () => {
  assert.equal(pickOne("api", PANES).surface_id, 2);
  assert.equal(pickOne("21", PANES).surface_id, 21);
  assert.equal(pickOne("cmdline:claude", PANES).surface_id, 12);
});

Deno.test("pickOne: no match is exit 3", () => {
  assert.throws(() => pickOne("nope", PANES), (e: unknown) => {
    assert.ok(e instanceof CliFailure);
    assert.equal(e.exitCode, 3);
    assert.equal(e.message, `No pane matches "nope"`);
    return true;
  });
  assert.throws(() => pickOne("1", []), (e: unknown) => e instanceof CliFailure && e.exitCode === 3);
});

Deno.test("pickOne: several matches is exit 3 naming them", () => {
  assert.throws(() => pickOne("cwd:/srv/web", PANES), (e: unknown) => {
    assert.ok(e instanceof CliFailure);
    assert.equal(e.exitCode, 3);
    assert.equal(e.message, `Selector "cwd:/srv/web" matches 2 panes: 1 (web), 3`);
    return true;
  });
});

Deno.test("pickOne: an empty selector stays a usage error", () => {
  assert.throws(() => pickOne("", PANES), UsageError);
});
