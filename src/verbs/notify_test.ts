import assert from "node:assert/strict";
import { parseNotifyArgs } from "./notify.ts";

Deno.test("notify verb: its arguments", () => {
  assert.deepEqual(parseNotifyArgs(["ls"]), { action: "ls" });
  assert.deepEqual(parseNotifyArgs(["test", "phone"]), { action: "test", sink: "phone" });
  assert.throws(() => parseNotifyArgs([]), /Missing the subcommand/);
  assert.throws(() => parseNotifyArgs(["test"]), /Missing the sink/);
  assert.throws(() => parseNotifyArgs(["ls", "x"]), /Unexpected argument "x"/);
  assert.throws(() => parseNotifyArgs(["send"]), /Unknown subcommand "send"/);
});
