/**
 * Process detection's /proc reads in their worker (src/core/pane/proc_scan.ts):
 * the worker and the inline fallback see the same foreground group of a real
 * pane, in both the full and the quick mode.
 */
import assert from "node:assert/strict";
import { ProcScanner } from "../src/core/pane/proc_scan.ts";
import { waitUntil, withHost } from "./_harness.ts";

Deno.test("ProcScanner: a pane's foreground group, from the worker and inline alike", async () => {
  await withHost({}, async (host) => {
    const { surface_id } = await host.call("workspace.create", {
      command: "exec sleep 600",
    });
    const pid = await waitUntil("the pane's pid", async () => {
      const { surfaces } = await host.call(
        "surface.list",
      );
      const s = surfaces.find((s) => s.surface_id === surface_id);
      return s?.cmd === "sleep 600" ? s.pid : false;
    });
    const scanner = new ProcScanner();
    try {
      for (const quick of [false, true]) {
        const members = await scanner.members([pid, 2 ** 22 + 12345], quick);
        assert.deepEqual(members.get(pid)?.map((p) => p.argv), [["sleep", "600"]], `quick: ${quick}`);
        assert.equal(members.get(2 ** 22 + 12345), null, "a pid that does not exist");
      }
      scanner.close();
      // Closed, it reads inline: the same answer.
      const inline = await scanner.members([pid]);
      assert.deepEqual(inline.get(pid)?.map((p) => p.argv), [["sleep", "600"]]);
    } finally {
      scanner.close();
    }
  });
});
