import assert from "node:assert/strict";
import { Sessions } from "./mod.ts";
import type { Registry } from "../core/registry.ts";
import type { PanePool } from "../core/pane/pool.ts";

Deno.test("sessions: a report that arrives while the pane is still being created is not lost", async () => {
  let sessions: Sessions | null = null;
  // A registry whose pane prints before `createWorkspace` returns (a loaded host).
  const registry = {
    closeListeners: new Set(),
    surfaces: new Map(),
    createWorkspace() {
      sessions!.onWorkerEvent({ ev: "session", id: 7, sequence: 3, chars: 11, exited: false });
      return Promise.resolve({ surface: { id: 7, exit: null } });
    },
  } as unknown as Registry;
  sessions = new Sessions(registry, {} as PanePool, { write: () => Promise.resolve(false) });
  const s = await sessions.create({ program: "/bin/sh" });
  assert.equal(s.chars, 11);
  assert.equal(s.sequence, 3);
  // Later reports apply as before.
  sessions.onWorkerEvent({ ev: "session", id: 7, sequence: 4, chars: 20, exited: true });
  assert.deepEqual([s.chars, s.sequence, s.exited], [20, 4, true]);
});
