import assert from "node:assert/strict";
import { withHost } from "./_harness.ts";

Deno.test("up: user errors (a vanished cwd, a name clash) are -32602 and exit 2, not internal errors", async () => {
  await withHost({}, async (host) => {
    const gone = `${host.dir}/gone`;
    const file = `${host.dir}/ws.toml`;
    await Deno.writeTextFile(file, `name = "w"\ncwd = "${gone}"\n[[panes]]\ncommand = "sleep 300"\n`);
    const missing = await host.cli(["up", file]);
    assert.equal(missing.code, 2, missing.stderr);
    assert.doesNotMatch(missing.stderr, /Internal error/);

    await host.json(["new", "--pane-name", "taken", "-c", "exec sleep 300"]);
    await Deno.writeTextFile(file, `name = "w"\n[[panes]]\nname = "taken"\ncommand = "sleep 300"\n`);
    const clash = await host.cli(["up", file]);
    assert.equal(clash.code, 2, clash.stderr);
    assert.match(clash.stderr, /taken/);
    assert.doesNotMatch(clash.stderr, /Internal error/);
  });
});
