/**
 * Workspaces and layouts: zero-based indexes, one active, titles,
 * new/select/close/focus, the four presets on the virtual size, splits that
 * resize their siblings (seen by the programs through SIGWINCH), and a
 * workspace that loses its last pane is closed.
 */
import assert from "node:assert/strict";
import { type TestHost, waitUntil, withHost } from "./_harness.ts";

interface Pane {
  surface_id: number;
  name: string | null;
  workspace: number;
  cols: number;
  rows: number;
  focused: boolean;
  exited: boolean;
}

interface Ws {
  index: number;
  title: string;
  active: boolean;
  layout: string;
  layout_tree: unknown;
  surface_ids: number[];
  focused_surface_id: number | null;
  cols: number;
  rows: number;
}

/** A pane that prints its PTY size at start and on every SIGWINCH. */
const WINCH = "trap 'stty size' WINCH; stty size; while :; do sleep 0.05; done";

async function panes(host: TestHost): Promise<Map<number, Pane>> {
  const { surfaces } = await host.json<{ surfaces: Pane[] }>(["ls", "--all"]);
  return new Map(surfaces.map((s) => [s.surface_id, s]));
}

async function workspaces(host: TestHost): Promise<Ws[]> {
  return (await host.call("workspace.list")).workspaces;
}

/** The last `rows cols` line the pane printed (read over the socket: this runs in polling loops). */
async function lastSize(host: TestHost, id: number): Promise<string | undefined> {
  const { text } = await host.call("surface.read", { surface_id: id, fenced: false });
  return text.split("\n").filter((l) => /^\d+ \d+$/.test(l.trim())).at(-1)?.trim();
}

/** Waits until every pane's program reports the size `ls` gives it. */
async function ptySizesMatch(host: TestHost, ids: number[]) {
  const list = await panes(host); // what `ls --all` shows the user
  for (const id of ids) {
    const want = `${list.get(id)!.rows} ${list.get(id)!.cols}`;
    await waitUntil(`pane ${id} to see its PTY size ${want} (via SIGWINCH)`, async () => {
      return (await lastSize(host, id)) === want;
    });
  }
  return list;
}

Deno.test("workspaces: zero-based indexes, one active, titles, select, focus and close", async () => {
  await withHost({}, async (host) => {
    const a = await host.json<Ws & { surface_id: number }>(["new", "--name", "alpha", "-c", "sleep 300"]);
    assert.equal(a.index, 0);
    assert.equal(a.title, "alpha");
    assert.equal(a.active, true);
    assert.equal(a.surface_id, 1);
    assert.equal(a.cols, 200, "default virtual size 200x50");
    assert.equal(a.rows, 50);

    const b = await host.json<Ws & { surface_id: number }>(["new", "--name", "beta", "-c", "sleep 300"]);
    assert.equal(b.index, 1);
    assert.equal(b.surface_id, 2);
    let list = await workspaces(host);
    assert.deepEqual(list.map((w) => [w.index, w.title, w.active]), [[0, "alpha", false], [1, "beta", true]]);

    // ls without --all shows the active workspace only.
    const ls = await host.json<{ surfaces: Pane[] }>(["ls"]);
    assert.deepEqual(ls.surfaces.map((s) => s.surface_id), [2]);

    const sel = await host.json<Ws>(["select", "0"]);
    assert.equal(sel.index, 0);
    assert.equal(sel.active, true);
    assert.equal((await host.call("workspace.current")).title, "alpha");
    assert.deepEqual((await host.json<{ surfaces: Pane[] }>(["ls"])).surfaces.map((s) => s.surface_id), [1]);
    assert.equal((await workspaces(host)).filter((w) => w.active).length, 1, "exactly one active");

    // Out of range: not found (exit 3), and the message gives the valid range.
    const bad = await host.cli(["select", "2"]);
    assert.equal(bad.code, 3);
    assert.equal(bad.stdout, "");
    assert.match(bad.stderr, /0\.\.1/);
    const neg = await host.cli(["select", "-1"]);
    assert.equal(neg.code, 2, neg.stderr);
    const word = await host.cli(["select", "first"]);
    assert.equal(word.code, 2, word.stderr);

    // focus activates the pane's workspace.
    const f = await host.json<Pane>(["focus", "2"]);
    assert.equal(f.focused, true);
    assert.equal((await host.call("workspace.current")).index, 1);

    // Closing workspace 0 closes its pane; beta becomes index 0.
    const closed = await host.json<{ closed: number }>(["close", "--workspace", "0"]);
    assert.equal(closed.closed, 0);
    list = await workspaces(host);
    assert.deepEqual(list.map((w) => [w.index, w.title, w.active]), [[0, "beta", true]]);
    const gone = await host.cli(["read", "1"]);
    assert.equal(gone.code, 3, gone.stderr);
    const noWs = await host.cli(["close", "--workspace", "5"]);
    assert.equal(noWs.code, 3, noWs.stderr);
  });
});

Deno.test("workspaces: a workspace whose last pane is closed goes away; an exited pane keeps it", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "--name", "one", "-c", "sleep 300"]);
    await host.json(["new", "--name", "two", "--pane-name", "p2", "-c", "sleep 300"]);
    await host.json(["split", "h", "--name", "p3", "-c", "exit 3"]);
    await host.json(["new", "--name", "three", "-c", "sleep 300"]);
    assert.deepEqual((await workspaces(host)).map((w) => w.title), ["one", "two", "three"]);

    // p3 exits: it stays listed and its workspace stays.
    await waitUntil("p3 to exit", async () => (await panes(host)).get(3)?.exited);
    assert.equal((await workspaces(host)).length, 3);

    assert.equal((await host.cli(["close", "p3"])).code, 0);
    assert.deepEqual((await workspaces(host))[1].surface_ids, [2]);
    // Closing the last pane closes the workspace; indexes close the gap.
    assert.equal((await host.cli(["close", "p2"])).code, 0);
    const list = await workspaces(host);
    assert.deepEqual(list.map((w) => [w.index, w.title]), [[0, "one"], [1, "three"]]);
    assert.equal(list.filter((w) => w.active).length, 1);
    assert.equal(list.find((w) => w.active)!.title, "three", "the active workspace is still three");
  });
});

Deno.test("layouts: even_h, even_v, main_vertical and tiled give PTY sizes the programs see", async () => {
  await withHost({}, async (host) => {
    const ws = await host.json<{ surface_id: number }>(["new", "-c", WINCH]);
    const ids = [ws.surface_id];
    for (let i = 0; i < 3; i++) {
      ids.push((await host.json<Pane>(["split", "h", "-c", WINCH])).surface_id);
    }

    // even_h: side by side, full height, widths differ by at most one, borders of one cell.
    await host.json(["layout", "even_h"]);
    let p = await ptySizesMatch(host, ids);
    const cols = ids.map((id) => p.get(id)!.cols);
    assert.ok(ids.every((id) => p.get(id)!.rows === 50), "full height");
    assert.equal(cols.reduce((x, y) => x + y) + ids.length - 1, 200);
    assert.ok(Math.max(...cols) - Math.min(...cols) <= 1, `even widths ${cols}`);
    assert.equal((await workspaces(host))[0].layout, "even_h");

    // even_v: stacked, full width.
    await host.json(["layout", "even_v"]);
    p = await ptySizesMatch(host, ids);
    const rows = ids.map((id) => p.get(id)!.rows);
    assert.ok(ids.every((id) => p.get(id)!.cols === 200), "full width");
    assert.equal(rows.reduce((x, y) => x + y) + ids.length - 1, 50);
    assert.ok(Math.max(...rows) - Math.min(...rows) <= ids.length - 1, `even heights ${rows}`);

    // main_vertical: the first pane full height on the left, the rest stacked on the right.
    await host.json(["layout", "main_vertical"]);
    p = await ptySizesMatch(host, ids);
    const main = p.get(ids[0])!;
    const rest = ids.slice(1).map((id) => p.get(id)!);
    assert.equal(main.rows, 50);
    assert.ok(rest.every((r) => r.cols === rest[0].cols), "the stack shares one width");
    assert.equal(main.cols + 1 + rest[0].cols, 200);
    assert.equal(rest.reduce((n, r) => n + r.rows, 0) + rest.length - 1, 50);

    // tiled: 4 panes make a 2x2 grid, filled in layout order.
    await host.json(["layout", "tiled"]);
    p = await ptySizesMatch(host, ids);
    const order = (await workspaces(host))[0].surface_ids;
    assert.deepEqual([...order].sort(), [...ids].sort());
    const sizes = order.map((id) => p.get(id)!);
    const rowSet = [...new Set(sizes.map((s) => s.rows))].sort();
    const colSet = [...new Set(sizes.map((s) => s.cols))].sort();
    assert.ok(rowSet.length <= 2 && colSet.length <= 2, JSON.stringify(sizes));
    assert.equal(sizes[0].rows + 1 + sizes[2].rows, 50);
    assert.equal(sizes[0].cols + 1 + sizes[1].cols, 200);
    assert.equal(sizes[0].rows, sizes[1].rows);
    assert.equal(sizes[0].cols, sizes[2].cols);

    const bad = await host.cli(["layout", "spiral"]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /layout/);
  });
});

Deno.test("split: h puts the new pane to the right, v below, and siblings get SIGWINCH", async () => {
  await withHost({}, async (host) => {
    const first =
      (await host.json<{ surface_id: number }>(["new", "--pane-name", "left", "-c", WINCH])).surface_id;
    await waitUntil("the first pane's size", async () => (await lastSize(host, first)) === "50 200");

    const right = await host.json<Pane>(["split", "h", "--target", "left", "--name", "right", "-c", WINCH]);
    let p = await ptySizesMatch(host, [first, right.surface_id]);
    assert.equal(p.get(first)!.cols + 1 + right.cols, 200);
    assert.equal(right.rows, 50);
    assert.ok(p.get(first)!.cols < 200, "the sibling shrank");
    let tree = (await workspaces(host))[0].layout_tree;
    assert.deepEqual(tree, {
      direction: "h",
      children: [{ surface_id: first }, { surface_id: right.surface_id }],
    }, "h: the new pane is to the right");

    const below = await host.json<Pane>(["split", "v", "--target", "right", "-c", WINCH]);
    p = await ptySizesMatch(host, [first, right.surface_id, below.surface_id]);
    assert.equal(p.get(right.surface_id)!.cols, below.cols, "v keeps the width");
    assert.equal(p.get(right.surface_id)!.rows + 1 + below.rows, 50);
    assert.equal(p.get(first)!.rows, 50, "the left pane is untouched");
    tree = (await workspaces(host))[0].layout_tree;
    assert.deepEqual(tree, {
      direction: "h",
      children: [
        { surface_id: first },
        { direction: "v", children: [{ surface_id: right.surface_id }, { surface_id: below.surface_id }] },
      ],
    }, "v: the new pane is below");

    // Closing a pane gives its room back to its siblings (SIGWINCH again).
    assert.equal((await host.cli(["close", String(below.surface_id)])).code, 0);
    p = await ptySizesMatch(host, [first, right.surface_id]);
    assert.equal(p.get(right.surface_id)!.rows, 50);

    // split without --target splits the focused pane of the active workspace.
    const focused = (await workspaces(host))[0].focused_surface_id;
    const s = await host.json<Pane>(["split", "v", "-c", WINCH]);
    tree = (await workspaces(host))[0].layout_tree as { children: unknown[] };
    assert.ok(JSON.stringify(tree).includes(`{"surface_id":${focused}},{"surface_id":${s.surface_id}}`));

    // Bad direction and unknown target.
    const bad = await host.cli(["split", "x"]);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, "");
    const none = await host.cli(["split", "h", "--target", "nope"]);
    assert.equal(none.code, 3);
  });
});

Deno.test("layout: a JSON split tree with sizes, and trees that do not name each pane once are refused", async () => {
  await withHost({}, async (host) => {
    const a = (await host.json<{ surface_id: number }>(["new", "-c", WINCH])).surface_id;
    const b = (await host.json<Pane>(["split", "h", "-c", WINCH])).surface_id;
    const c = (await host.json<Pane>(["split", "h", "-c", WINCH])).surface_id;
    const tree = {
      direction: "v",
      children: [{ surface_id: c }, {
        direction: "h",
        children: [{ surface_id: a }, { surface_id: b }],
        sizes: [3, 1],
      }],
      sizes: [1, 1],
    };
    const ws = await host.json<Ws>(["layout", JSON.stringify(tree)]);
    assert.equal(ws.layout, "custom");
    assert.deepEqual(ws.layout_tree, tree);
    const p = await ptySizesMatch(host, [a, b, c]);
    assert.equal(p.get(c)!.cols, 200);
    assert.equal(p.get(c)!.rows + 1 + p.get(a)!.rows, 50);
    assert.equal(p.get(a)!.rows, p.get(b)!.rows);
    assert.equal(p.get(a)!.cols + 1 + p.get(b)!.cols, 200);
    assert.ok(p.get(a)!.cols >= 3 * p.get(b)!.cols - 3, `3:1 split ${p.get(a)!.cols}/${p.get(b)!.cols}`);

    const bad = [
      { direction: "h", children: [{ surface_id: a }, { surface_id: b }] },
      {
        direction: "h",
        children: [{ surface_id: a }, { surface_id: b }, { surface_id: c }, { surface_id: a }],
      },
      { direction: "h", children: [{ surface_id: a }, { surface_id: b }, { surface_id: 99 }] },
      { direction: "x", children: [{ surface_id: a }] },
    ];
    for (const t of bad) {
      const r = await host.cli(["layout", JSON.stringify(t)]);
      assert.equal(r.code, 2, `${JSON.stringify(t)}: ${r.stderr}`);
      assert.match(r.stderr, /layout|direction/);
      assert.equal(r.stderr.trim().split("\n").length, 1);
    }
    const notJson = await host.cli(["layout", "{nope"]);
    assert.equal(notJson.code, 2);
    // The refused trees changed nothing.
    assert.deepEqual((await workspaces(host))[0].layout_tree, tree);
  });
});

Deno.test("split: concurrent splits of one workspace leave every pane with the size its program sees", async () => {
  await withHost({}, async (host) => {
    await host.json(["new", "-c", WINCH]);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => host.cli(["split", i % 2 ? "h" : "v", "-c", WINCH])),
    );
    assert.deepEqual(results.map((r) => r.code), [0, 0, 0, 0, 0, 0]);
    const ids = results.map((r) => JSON.parse(r.stdout).surface_id as number);
    assert.deepEqual([...ids].sort((a, b) => a - b), [2, 3, 4, 5, 6, 7], "unique ids");
    const [ws] = await workspaces(host);
    assert.deepEqual([...ws.surface_ids].sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7]);
    const p = await ptySizesMatch(host, ws.surface_ids);
    const area = [...p.values()].reduce((n, s) => n + s.cols * s.rows, 0);
    assert.ok(area <= 200 * 50, `panes fit the virtual size (${area} cells)`);
  });
});
