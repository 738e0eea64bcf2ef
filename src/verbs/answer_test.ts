import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { parseAnswerArgs } from "./answer.ts";

Deno.test("answer: approve, deny, an option's number or label, and a dialog id", () => {
  assert.deepEqual(parseAnswerArgs("approve", undefined), { answer: "approve", dialogId: undefined });
  assert.deepEqual(parseAnswerArgs(" DENY ", "0a1b2c3d"), { answer: "deny", dialogId: "0a1b2c3d" });
  assert.deepEqual(parseAnswerArgs("2", undefined), { answer: "2", dialogId: undefined });
  assert.deepEqual(parseAnswerArgs("Allow always", undefined), {
    answer: "Allow always",
    dialogId: undefined,
  });
  for (
    const [answer, dialog, message] of [
      ["", undefined, /^Missing the answer/],
      ["  ", undefined, /^Missing the answer/],
      ["0", undefined, /^Option "0" does not exist/],
      ["x".repeat(257), undefined, /at most 256/],
      ["approve", "deadbee", /^"--dialog": "deadbee" is not a dialog id/],
      ["approve", "DEADBEEF", /is not a dialog id/],
    ] as const
  ) {
    assert.throws(
      () => parseAnswerArgs(answer, dialog),
      (e) => e instanceof UsageError && message.test(e.message),
    );
  }
});
