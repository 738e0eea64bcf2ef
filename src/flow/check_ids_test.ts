import assert from "node:assert/strict";
import { checkFlow } from "./check.ts";

Deno.test("flow ids: a capture on a step whose id is taken is not the first step's (seed 440924449 threw)", () => {
  const { issues } = checkFlow({
    step: [
      { id: "check", pane: { command: "cat" } },
      {
        id: "check",
        foreach: ["api", "web"],
        pane: { command: "echo CHECKED:${item}" },
        ready: { pattern: "^CHECKED:${item}", timeout_secs: 30 },
        capture: { var: "result", lines: 5 },
      },
      { id: "report", needs: ["check"], send: { target: "check", text: "api: ${result.api}" } },
    ],
  }, { baseDir: "/tmp" });
  const lines = issues.map((i) => `${i.path.join(".")}: ${i.message}`);
  assert.deepEqual(lines, [`step.1.id: "check" is already the id of step[0]`]);
});
