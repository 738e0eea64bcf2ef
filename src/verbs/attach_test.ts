import assert from "node:assert/strict";
import { keyDecoder } from "./attach.ts";

Deno.test("attach: a UTF-8 character split across stdin reads is typed whole", () => {
  const bytes = new TextEncoder().encode("é€😀");
  const decode = keyDecoder();
  let typed = "";
  for (const b of bytes) typed += decode(Uint8Array.of(b)); // one byte per read
  assert.equal(typed, "é€😀");
});
