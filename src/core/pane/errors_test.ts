import assert from "node:assert/strict";
import { fromFailure, isPaneError, PaneError, PaneErrorCode, toFailure } from "./errors.ts";

Deno.test("pane errors: the code survives postMessage, and the worker's stack comes back as the cause", () => {
  const thrown = new PaneError(PaneErrorCode.Stalled, "the program stopped reading its input");
  // What postMessage does to the value: a structured clone.
  const back = fromFailure(structuredClone(toFailure(thrown)));
  assert.ok(back instanceof PaneError);
  assert.equal(back.code, PaneErrorCode.Stalled);
  assert.equal(back.message, "the program stopped reading its input");
  assert.ok(isPaneError(back, PaneErrorCode.Stalled));
  assert.equal(isPaneError(back, PaneErrorCode.Exited), false);
  const cause = back.cause as Error;
  assert.match(cause.stack ?? "", /^in the pane worker: PaneError: the program stopped reading/);
  assert.match(cause.stack ?? "", /errors_test\.ts/, "where it was thrown");
});

Deno.test("pane errors: anything else is internal and keeps what it wrapped", () => {
  const inner = new RangeError("too deep");
  const failure = structuredClone(toFailure(new Error("read failed", { cause: inner })));
  assert.equal(failure.code, PaneErrorCode.Internal);
  assert.equal(failure.message, "read failed");
  assert.match(failure.stack ?? "", /caused by: RangeError: too deep/);
  assert.deepEqual(toFailure("plain"), { code: PaneErrorCode.Internal, message: "plain" });
});
