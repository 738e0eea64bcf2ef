import assert from "node:assert/strict";
import { PromptFiles } from "./prompt_files.ts";

Deno.test("prompt files: deleted with their pane, and all at host stop", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const files = new PromptFiles();
    const a = `${dir}/surface-1-1.md`, b = `${dir}/surface-2-1.md`, c = `${dir}/surface-2-2.md`;
    for (const p of [a, b, c]) await Deno.writeTextFile(p, "x");
    files.add(1, a);
    files.add(2, b);
    files.add(2, c);
    await files.closed(2);
    const left = [...Deno.readDirSync(dir)].map((e) => e.name);
    assert.deepEqual(left, ["surface-1-1.md"]);
    await files.clear();
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
