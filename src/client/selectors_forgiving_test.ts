import assert from "node:assert/strict";
import type { PaneInfo } from "./selectors.ts";
import { describePane, paneUri, resolveTarget, TargetError } from "./selectors.ts";
import { paneInfo } from "./_pane_fixture.ts";

function pane(surface_id: number, name: string | null, extra: Partial<PaneInfo> = {}): PaneInfo {
  return paneInfo({ surface_id, name, cmd: "sh", cwd: "/tmp", workspace: 0, ...extra });
}

const PANES = [
  pane(1, "web", { cmd: "npm run dev" }),
  pane(2, "Worker-A", { cmd: "python worker.py", cwd: "/srv/a" }),
  pane(3, "worker-b", { cmd: "python worker.py", cwd: "/srv/b" }),
  pane(4, null, { cmd: "htop" }),
  pane(5, "42"), // hosts refuse numeric names, but a pane list is data: stay safe
];

function fails(target: string, pattern: RegExp, panes = PANES): TargetError {
  try {
    resolveTarget(target, panes);
  } catch (e) {
    assert.ok(e instanceof TargetError, `expected a TargetError, got ${e}`);
    assert.match(e.message, pattern);
    return e;
  }
  assert.fail(`"${target}" resolved but should not have`);
}

Deno.test("a surface_id resolves exactly, as a string, a number or #n", () => {
  assert.equal(resolveTarget("4", PANES).surface_id, 4);
  assert.equal(resolveTarget(4, PANES).surface_id, 4);
  assert.equal(resolveTarget("#2", PANES).surface_id, 2);
  assert.equal(resolveTarget(" 1 ", PANES).surface_id, 1);
});

Deno.test("an unknown id falls through to names, then fails with the pane list", () => {
  assert.equal(resolveTarget("42", PANES).surface_id, 5);
  const e = fails("9", /^No pane matches "9"; panes: 1 \("web"\), 2 \("Worker-A"\), 3 \("worker-b"\), 4, 5/);
  assert.equal(e.candidates.length, PANES.length);
});

Deno.test("names match exactly, then case-insensitively, then by unique prefix", () => {
  assert.equal(resolveTarget("web", PANES).surface_id, 1);
  assert.equal(resolveTarget("WEB", PANES).surface_id, 1);
  assert.equal(resolveTarget("worker-a", PANES).surface_id, 2);
  assert.equal(resolveTarget("we", PANES).surface_id, 1);
  assert.equal(resolveTarget("Worker-B", PANES).surface_id, 3);
  assert.equal(resolveTarget("WORKER-b", PANES).surface_id, 3);
});

Deno.test("an exact name beats a case-insensitive match of another pane", () => {
  const panes = [pane(1, "Api"), pane(2, "api")];
  assert.equal(resolveTarget("api", panes).surface_id, 2);
  assert.equal(resolveTarget("Api", panes).surface_id, 1);
  fails("API", /^Target "API" is ambiguous: it names 2 panes: 1 \("Api"\), 2 \("api"\)/, panes);
});

Deno.test("an ambiguous prefix lists the candidates", () => {
  const e = fails(
    "work",
    /^Target "work" is ambiguous: .* 2 panes: 2 \("Worker-A"\), 3 \("worker-b"\); pass a/,
  );
  assert.deepEqual(e.candidates.map((p) => p.surface_id), [2, 3]);
});

Deno.test("cmdline: and cwd: selectors work; several matches are ambiguous", () => {
  assert.equal(resolveTarget("cmdline:npm", PANES).surface_id, 1);
  assert.equal(resolveTarget("cwd:/srv/b", PANES).surface_id, 3);
  fails("cmdline:python", /^Target "cmdline:python" is ambiguous: the selector matches 2 panes: 2 .*, 3 /);
  fails("cmdline:vim", /^No pane matches "cmdline:vim"; panes: /);
  fails("cmdline:", /^Selector "cmdline:" needs a substring; panes: /);
});

Deno.test("pane:// resource URIs resolve to their pane", () => {
  assert.equal(resolveTarget("pane://web/content", PANES).surface_id, 1);
  assert.equal(resolveTarget("pane://4/content", PANES).surface_id, 4);
  assert.equal(resolveTarget("pane://my%20pane/content", [pane(7, "my pane")]).surface_id, 7);
});

Deno.test("empty targets and empty hosts give clear errors", () => {
  fails("", /^Empty target; panes: /);
  fails("web", /^No pane matches "web"; there are no panes$/, []);
});

Deno.test("paneUri and describePane", () => {
  assert.equal(paneUri(pane(1, "web")), "pane://web/content");
  assert.equal(paneUri(pane(4, null)), "pane://4/content");
  assert.equal(paneUri(pane(7, "my pane/x")), "pane://my%20pane%2Fx/content");
  assert.equal(describePane(pane(1, "web")), `1 ("web")`);
  assert.equal(describePane(pane(4, null)), "4");
});
