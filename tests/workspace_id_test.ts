import assert from "node:assert/strict";
import { withHost } from "./_harness.ts";

interface Ws {
  index: number;
  id: string;
  surface_ids: number[];
}

Deno.test("workspaces: a stable id beside the index, accepted wherever an index is", async () => {
  await withHost({}, async (host) => {
    const made: (Ws & { surface_id: number })[] = [];
    for (let i = 0; i < 3; i++) {
      made.push(await host.json(["new", "--name", `ws${i}`, "-c", "exec sleep 300"]));
    }
    assert.deepEqual(made.map((w) => w.index), [0, 1, 2]);
    assert.equal(new Set(made.map((w) => w.id)).size, 3);
    for (const w of made) assert.match(w.id, /^w[1-9]\d*$/);

    // Another client closes the first: indexes shift, ids do not.
    await host.json(["close", "--workspace", made[0].id]);
    const { workspaces } = await host.call("workspace.list");
    assert.deepEqual(workspaces.map((w) => [w.index, w.id]), [[0, made[1].id], [1, made[2].id]]);

    const ls = await host.json<{ surfaces: { surface_id: number }[] }>(["ls", "--workspace", made[2].id]);
    assert.deepEqual(ls.surfaces.map((s) => s.surface_id), [made[2].surface_id]);
    const byIndex = await host.json<{ surfaces: { surface_id: number }[] }>(["ls", "--workspace", "1"]);
    assert.deepEqual(
      byIndex.surfaces.map((s) => s.surface_id),
      [made[2].surface_id],
      "the index still works",
    );

    const sel = await host.json<Ws & { active: boolean }>(["select", made[1].id]);
    assert.equal(sel.index, 0);
    assert.equal(sel.active, true);
    const laid = await host.json<Ws & { layout: string }>(["layout", "even_v", "--workspace", made[2].id]);
    assert.equal(laid.id, made[2].id);
    const panes = await host.call("surface.list", { workspace: made[2].id });
    assert.equal(panes.surfaces.length, 1);

    const gone = await host.cli(["ls", "--workspace", made[0].id]);
    assert.equal(gone.code, 3, gone.stderr);
    const closed = await host.rpc("workspace.select", { index: made[0].id });
    assert.match((closed.error as { message: string }).message, new RegExp(`No workspace ${made[0].id}`));
    const bad = await host.cli(["select", "x3"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /workspace index \(0, 1, \.\.\.\) or id \(w1, w2, \.\.\.\)/);
    const badParam = await host.rpc("workspace.close", { index: "3" });
    assert.equal((badParam.error as { code: number }).code, -32602);
  });
});
