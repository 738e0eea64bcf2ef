import assert from "node:assert/strict";
import { PromptFiles } from "./prompt_files.ts";

Deno.test("prompt files: written 0600 in the given directory, deleted with their pane, and all at host stop", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const files = new PromptFiles(`${dir}/prompts`);
    const a = await files.write(1, "one");
    const b = await files.write(2, "two");
    const c = await files.write(2, "two again");
    assert.notEqual(b, c);
    for (const [path, text] of [[a, "one"], [b, "two"], [c, "two again"]]) {
      assert.ok(path.startsWith(`${dir}/prompts/surface-`), path);
      assert.equal(await Deno.readTextFile(path), text);
      assert.equal((await Deno.stat(path)).mode! & 0o777, 0o600);
    }
    assert.equal((await Deno.stat(`${dir}/prompts`)).mode! & 0o777, 0o700);
    await files.closed(2);
    const left = [...Deno.readDirSync(`${dir}/prompts`)].map((e) => `${dir}/prompts/${e.name}`);
    assert.deepEqual(left, [a]);
    await files.clear();
    assert.deepEqual([...Deno.readDirSync(`${dir}/prompts`)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
