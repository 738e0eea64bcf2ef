import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { renderReport, restoreRequest } from "./restore.ts";

const none = { list: false, "dry-run": false, json: false };

Deno.test("restore's arguments: a restore by default, a plan with --list or --dry-run", () => {
  assert.deepEqual(restoreRequest(none, []), { method: "restore.run", workspaces: [], show: "commands" });
  assert.deepEqual(restoreRequest({ ...none, list: true }, ["api"]), {
    method: "restore.plan",
    workspaces: ["api"],
    show: "list",
  });
  assert.equal(restoreRequest({ ...none, "dry-run": true, json: true }, []).show, "json");
  assert.throws(() => restoreRequest({ ...none, list: true, "dry-run": true }, []), UsageError);
  assert.throws(() => restoreRequest(none, [" "]), /A workspace name is empty/);
});

Deno.test("restore's report names each pane, what it runs and why it is a shell", () => {
  const lines = renderReport(
    {
      journal: "/state/j.json",
      written_at: 0,
      problem: null,
      workspaces: [{
        id: "w1",
        title: "api",
        skipped: null,
        panes: [{
          name: "cc",
          was_surface_id: 3,
          cwd: "/src",
          argv: ["claude", "--resume", "abc", "--model", "x y"],
          how: "resume",
          agent: "claude",
          session_id: "abc",
          note: null,
          problem: null,
          history_lines: 12,
          surface_id: null,
        }, {
          name: null,
          was_surface_id: 4,
          cwd: "/",
          argv: ["/bin/sh"],
          how: "shell",
          agent: null,
          session_id: null,
          note: null,
          problem: 'its directory "/gone" no longer exists',
          history_lines: 0,
          surface_id: null,
        }],
      }],
    },
    "commands",
    false,
  );
  assert.deepEqual(lines.slice(1), [
    'workspace "api" (w1): 2 pane(s)',
    "  cc  /src  claude --resume abc --model 'x y'  (12 lines of history)",
    "  #4  /  /bin/sh",
    '    problem: its directory "/gone" no longer exists',
  ]);
  assert.match(
    renderReport({ journal: null, written_at: null, problem: null, workspaces: [] }, "list", false)[0],
    /no journal/,
  );
});
