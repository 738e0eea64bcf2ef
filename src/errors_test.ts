import assert from "node:assert/strict";
import { CliFailure, describeError, errorChain, RpcError, UsageError } from "./errors.ts";
import { ErrorCode, ErrorReason } from "./spec/codes.ts";

Deno.test("RpcError.exitCode maps reasons and codes to exit codes", () => {
  const cases: [number, string | undefined, number][] = [
    [ErrorCode.InvalidParams, ErrorReason.SurfaceNotFound, 3],
    [ErrorCode.InvalidParams, ErrorReason.WorkspaceNotFound, 3],
    [ErrorCode.InternalError, ErrorReason.SurfaceNotFound, 3],
    [ErrorCode.InvalidParams, ErrorReason.Timeout, 4],
    [ErrorCode.InternalError, ErrorReason.Timeout, 4],
    [ErrorCode.InvalidParams, undefined, 2],
    [ErrorCode.InvalidParams, ErrorReason.Exited, 1],
    [ErrorCode.MethodNotFound, ErrorReason.Gated, 1],
    [ErrorCode.MethodNotFound, undefined, 1],
    [ErrorCode.InternalError, undefined, 1],
    [ErrorCode.ParseError, undefined, 1],
    [ErrorCode.InvalidRequest, undefined, 1],
    [ErrorCode.Backpressure, undefined, 1],
    [ErrorCode.Permission, undefined, 1],
  ];
  for (const [code, reason, exit] of cases) {
    const err = new RpcError(code, "m", reason === undefined ? undefined : { reason });
    assert.equal(err.exitCode, exit, `code ${code} reason ${reason}`);
  }
  assert.equal(new RpcError(ErrorCode.InvalidParams, "m", {}).exitCode, 2);
  assert.equal(new RpcError(ErrorCode.InvalidParams, "m", { other: 1 }).exitCode, 2);
});

Deno.test("RpcError keeps code, message and data", () => {
  const err = new RpcError(-32602, "Bad", { reason: "x", extra: 1 });
  assert.equal(err.code, -32602);
  assert.equal(err.message, "Bad");
  assert.deepEqual(err.data, { reason: "x", extra: 1 });
  assert.equal(err.name, "RpcError");
});

Deno.test("describeError maps each error root", () => {
  assert.deepEqual(describeError(new UsageError("bad flag")), { message: "bad flag", exitCode: 2 });
  assert.deepEqual(describeError(new CliFailure("gone")), { message: "gone", exitCode: 1 });
  assert.deepEqual(describeError(new CliFailure("none", 3)), { message: "none", exitCode: 3 });
  assert.deepEqual(
    describeError(new RpcError(-32602, "late", { reason: ErrorReason.Timeout })),
    { message: "late", exitCode: 4 },
  );
  assert.deepEqual(describeError(new TypeError("x is undefined")), {
    message: "Internal error: x is undefined",
    exitCode: 1,
  });
  assert.deepEqual(describeError("boom"), { message: "Internal error: boom", exitCode: 1 });
});

Deno.test("describeError maps errors of another copy of these classes by their exit code", () => {
  // The bundled CLI's verb files each hold their own copy of the error classes.
  class CopyOfCliFailure extends Error {
    constructor(message: string, readonly exitCode: number) {
      super(message);
    }
  }
  assert.deepEqual(describeError(new CopyOfCliFailure("no pane", 3)), { message: "no pane", exitCode: 3 });
});

Deno.test("errorChain prints each wrapped error's stack, outermost first", () => {
  const root = new TypeError("x is undefined");
  const mid = new Error("Cannot start pane: x is undefined", { cause: root });
  const top = new RpcError(ErrorCode.InternalError, "wrapped", undefined, { cause: mid });
  const text = errorChain(top);
  const at = (s: string) => text.indexOf(s);
  assert.ok(at("RpcError: wrapped") === 0, text);
  assert.ok(at("caused by: Error: Cannot start pane") > 0, text);
  assert.ok(at("caused by: TypeError: x is undefined") > at("caused by: Error: Cannot start pane"), text);
  assert.match(text, /at .*errors_test\.ts/, "the stacks are kept");
  assert.equal(errorChain("boom"), "boom");
  // A cycle stops the chain instead of looping.
  const a = new Error("a");
  const b = new Error("b", { cause: a });
  a.cause = b;
  assert.equal(errorChain(a).split("caused by:").length, 2);
});
