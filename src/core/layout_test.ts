import assert from "node:assert/strict";
import {
  type Layout,
  layoutLeaves,
  type LayoutPreset,
  layoutRects,
  presetLayout,
  type Rect,
  removeFromLayout,
  splitLayout,
} from "./layout.ts";

const PRESETS: LayoutPreset[] = ["even_h", "even_v", "main_vertical", "tiled"];
const SIZES: [number, number][] = [[200, 50], [80, 24], [101, 37], [15, 15]];

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i + 1);
}

/** The smallest rectangle holding every pane of a subtree. */
function bounds(tree: Layout, rects: Map<number, Rect>): Rect {
  const rs = layoutLeaves(tree).map((id) => rects.get(id)!);
  const x = Math.min(...rs.map((r) => r.x));
  const y = Math.min(...rs.map((r) => r.y));
  return {
    x,
    y,
    cols: Math.max(...rs.map((r) => r.x + r.cols)) - x,
    rows: Math.max(...rs.map((r) => r.y + r.rows)) - y,
  };
}

/**
 * Checks that the tree tiles `cols` x `rows`: every cell belongs to at most
 * one pane, and each node's children sit side by side (or stacked) across its
 * whole extent with exactly one border cell between neighbours.
 */
function assertTiles(tree: Layout, cols: number, rows: number, label: string) {
  const rects = layoutRects(tree, cols, rows);
  assert.deepEqual([...rects.keys()].sort((a, b) => a - b), layoutLeaves(tree).sort((a, b) => a - b), label);
  const owner: (number | undefined)[] = new Array(cols * rows);
  let area = 0;
  for (const [id, r] of rects) {
    assert.ok(r.cols >= 1 && r.rows >= 1, `${label}: pane ${id} is ${r.cols}x${r.rows}`);
    assert.ok(r.x >= 0 && r.y >= 0 && r.x + r.cols <= cols && r.y + r.rows <= rows, `${label}: ${id} out`);
    for (let y = r.y; y < r.y + r.rows; y++) {
      for (let x = r.x; x < r.x + r.cols; x++) {
        assert.equal(owner[y * cols + x], undefined, `${label}: ${id} overlaps at ${x},${y}`);
        owner[y * cols + x] = id;
      }
    }
    area += r.cols * r.rows;
  }
  const check = (t: Layout, box: Rect) => {
    assert.deepEqual(bounds(t, rects), box, `${label}: node bounds`);
    if ("surface_id" in t) return;
    let pos = t.direction === "h" ? box.x : box.y;
    const end = t.direction === "h" ? box.x + box.cols : box.y + box.rows;
    for (const child of t.children) {
      const b = bounds(child, rects);
      if (t.direction === "h") {
        assert.equal(b.x, pos, `${label}: child starts one border after its sibling`);
        check(child, { x: pos, y: box.y, cols: b.cols, rows: box.rows });
        pos += b.cols + 1;
      } else {
        assert.equal(b.y, pos, `${label}: child starts one border after its sibling`);
        check(child, { x: box.x, y: pos, cols: box.cols, rows: b.rows });
        pos += b.rows + 1;
      }
    }
    assert.equal(pos - 1, end, `${label}: children fill the node`);
  };
  check(tree, { x: 0, y: 0, cols, rows });
  assert.ok(area <= cols * rows);
}

Deno.test("presetLayout shapes", () => {
  const L = (id: number) => ({ surface_id: id });
  assert.equal(presetLayout("tiled", []), null);
  for (const p of PRESETS) assert.deepEqual(presetLayout(p, [7]), L(7), p);
  assert.deepEqual(presetLayout("even_h", [1, 2, 3]), { direction: "h", children: [L(1), L(2), L(3)] });
  assert.deepEqual(presetLayout("even_v", [1, 2]), { direction: "v", children: [L(1), L(2)] });
  assert.deepEqual(presetLayout("main_vertical", [1, 2]), { direction: "h", children: [L(1), L(2)] });
  assert.deepEqual(presetLayout("main_vertical", [1, 2, 3]), {
    direction: "h",
    children: [L(1), { direction: "v", children: [L(2), L(3)] }],
  });
  // tiled: rows of ceil(n / ceil(sqrt(n))) panes, like tmux.
  assert.deepEqual(presetLayout("tiled", [1, 2]), { direction: "v", children: [L(1), L(2)] });
  assert.deepEqual(presetLayout("tiled", [1, 2, 3, 4]), {
    direction: "v",
    children: [{ direction: "h", children: [L(1), L(2)] }, { direction: "h", children: [L(3), L(4)] }],
  });
  assert.deepEqual(presetLayout("tiled", [1, 2, 3, 4, 5, 6, 7]), {
    direction: "v",
    children: [
      { direction: "h", children: [L(1), L(2), L(3)] },
      { direction: "h", children: [L(4), L(5), L(6)] },
      L(7),
    ],
  });
});

Deno.test("every preset tiles the virtual size for 1..7 panes", () => {
  for (const preset of PRESETS) {
    for (let n = 1; n <= 7; n++) {
      const tree = presetLayout(preset, range(n))!;
      assert.deepEqual(layoutLeaves(tree), range(n), `${preset} keeps pane order`);
      for (const [cols, rows] of SIZES) assertTiles(tree, cols, rows, `${preset} n=${n} ${cols}x${rows}`);
    }
  }
});

Deno.test("even presets give panes sizes that differ by at most one cell", () => {
  for (let n = 1; n <= 7; n++) {
    for (const [cols, rows] of SIZES) {
      const h = [...layoutRects(presetLayout("even_h", range(n)), cols, rows).values()].map((r) => r.cols);
      const v = [...layoutRects(presetLayout("even_v", range(n)), cols, rows).values()].map((r) => r.rows);
      for (const [sizes, length] of [[h, cols], [v, rows]] as const) {
        if (length < 2 * n - 1) continue; // too small for everyone: each pane gets one cell
        assert.ok(Math.max(...sizes) - Math.min(...sizes) <= 1, `n=${n} ${cols}x${rows}: ${sizes}`);
        assert.equal(sizes.reduce((a, b) => a + b, 0) + n - 1, length);
      }
    }
  }
});

Deno.test("layoutRects exact rectangles", () => {
  assert.deepEqual(layoutRects(null, 200, 50), new Map());
  assert.deepEqual(
    layoutRects({ surface_id: 1 }, 200, 50),
    new Map([[1, { x: 0, y: 0, cols: 200, rows: 50 }]]),
  );
  assert.deepEqual(
    layoutRects(presetLayout("even_h", [1, 2, 3]), 200, 50),
    new Map([
      [1, { x: 0, y: 0, cols: 66, rows: 50 }],
      [2, { x: 67, y: 0, cols: 66, rows: 50 }],
      [3, { x: 134, y: 0, cols: 66, rows: 50 }],
    ]),
  );
  assert.deepEqual(
    layoutRects(presetLayout("main_vertical", [1, 2, 3]), 200, 50),
    new Map([
      [1, { x: 0, y: 0, cols: 99, rows: 50 }],
      [2, { x: 100, y: 0, cols: 100, rows: 24 }],
      [3, { x: 100, y: 25, cols: 100, rows: 25 }],
    ]),
  );
  assert.deepEqual(
    layoutRects(presetLayout("tiled", [1, 2, 3, 4]), 80, 24),
    new Map([
      [1, { x: 0, y: 0, cols: 39, rows: 11 }],
      [2, { x: 40, y: 0, cols: 40, rows: 11 }],
      [3, { x: 0, y: 12, cols: 39, rows: 12 }],
      [4, { x: 40, y: 12, cols: 40, rows: 12 }],
    ]),
  );
});

Deno.test("layoutRects honours sizes as weights", () => {
  const tree: Layout = { direction: "h", children: [{ surface_id: 1 }, { surface_id: 2 }], sizes: [3, 1] };
  assert.deepEqual(
    layoutRects(tree, 101, 10),
    new Map([[1, { x: 0, y: 0, cols: 75, rows: 10 }], [2, { x: 76, y: 0, cols: 25, rows: 10 }]]),
  );
  assertTiles(tree, 101, 10, "weighted");
  // sizes of the wrong length are ignored.
  assert.deepEqual(
    layoutRects({ ...tree, sizes: [1, 2, 3] }, 101, 10),
    new Map([[1, { x: 0, y: 0, cols: 50, rows: 10 }], [2, { x: 51, y: 0, cols: 50, rows: 10 }]]),
  );
  // Zero weights count as equal.
  assert.deepEqual(
    layoutRects({ ...tree, sizes: [0, 0] }, 101, 10),
    new Map([[1, { x: 0, y: 0, cols: 50, rows: 10 }], [2, { x: 51, y: 0, cols: 50, rows: 10 }]]),
  );
  // A tiny weight still gets a cell.
  const tiny: Layout = { direction: "v", children: [{ surface_id: 1 }, { surface_id: 2 }], sizes: [1000, 1] };
  assert.equal(layoutRects(tiny, 10, 10).get(2)!.rows, 1);
  assertTiles(tiny, 10, 10, "tiny weight");
});

Deno.test("splitLayout: into an empty workspace, h to the right, v below", () => {
  assert.deepEqual(splitLayout(null, null, 1, "h"), { surface_id: 1 });
  const h = splitLayout({ surface_id: 1 }, 1, 2, "h");
  assert.deepEqual(h, { direction: "h", children: [{ surface_id: 1 }, { surface_id: 2 }] });
  const rects = layoutRects(h, 200, 50);
  assert.ok(rects.get(2)!.x > rects.get(1)!.x);
  const v = splitLayout({ surface_id: 1 }, 1, 2, "v");
  assert.deepEqual(v, { direction: "v", children: [{ surface_id: 1 }, { surface_id: 2 }] });
  assert.ok(layoutRects(v, 200, 50).get(2)!.y > 0);
});

Deno.test("splitLayout: same direction joins the parent as the next sibling, sizes evened", () => {
  const tree: Layout = {
    direction: "h",
    children: [{ surface_id: 1 }, { surface_id: 2 }, { surface_id: 3 }],
    sizes: [2, 1, 1],
  };
  assert.deepEqual(splitLayout(tree, 2, 4, "h"), {
    direction: "h",
    children: [{ surface_id: 1 }, { surface_id: 2 }, { surface_id: 4 }, { surface_id: 3 }],
  });
  assert.deepEqual(splitLayout(tree, 3, 4, "h"), {
    direction: "h",
    children: [{ surface_id: 1 }, { surface_id: 2 }, { surface_id: 3 }, { surface_id: 4 }],
  });
});

Deno.test("splitLayout: the other direction nests a node in place", () => {
  const tree: Layout = { direction: "h", children: [{ surface_id: 1 }, { surface_id: 2 }], sizes: [2, 1] };
  const out = splitLayout(tree, 1, 3, "v");
  assert.deepEqual(out, {
    direction: "h",
    children: [{ direction: "v", children: [{ surface_id: 1 }, { surface_id: 3 }] }, { surface_id: 2 }],
    sizes: [2, 1],
  });
  assertTiles(out, 200, 50, "nested split");
  // A deeper target.
  const deeper = splitLayout(out, 3, 4, "h");
  assert.deepEqual(layoutLeaves(deeper), [1, 3, 4, 2]);
  assertTiles(deeper, 200, 50, "deeper split");
});

Deno.test("splitLayout: no target splits the last pane", () => {
  const tree = presetLayout("main_vertical", [1, 2, 3])!;
  assert.deepEqual(layoutLeaves(splitLayout(tree, null, 9, "v")), [1, 2, 3, 9]);
  assert.deepEqual(splitLayout(tree, null, 9, "v"), {
    direction: "h",
    children: [{ surface_id: 1 }, {
      direction: "v",
      children: [{ surface_id: 2 }, { surface_id: 3 }, { surface_id: 9 }],
    }],
  });
});

Deno.test("splitLayout then removeFromLayout tiles at every step", () => {
  let tree: Layout | null = null;
  const dirs: ("h" | "v")[] = ["h", "v", "v", "h", "h", "v", "h"];
  const targets = [null, 1, 2, 2, 3, 1, 5];
  dirs.forEach((d, i) => {
    tree = splitLayout(tree, targets[i], i + 1, d);
    assert.deepEqual(layoutLeaves(tree).sort(), range(i + 1), `after split ${i + 1}`);
    assertTiles(tree, 200, 50, `split ${i + 1}`);
  });
  for (const id of [4, 1, 7, 2, 6, 3]) {
    tree = removeFromLayout(tree, id);
    assert.ok(!layoutLeaves(tree).includes(id));
    assertTiles(tree!, 200, 50, `removed ${id}`);
  }
  assert.deepEqual(tree, { surface_id: 5 });
  assert.equal(removeFromLayout(tree, 5), null);
});

Deno.test("removeFromLayout collapses nodes left with one child", () => {
  const L = (id: number) => ({ surface_id: id });
  assert.equal(removeFromLayout(null, 1), null);
  assert.equal(removeFromLayout(L(1), 1), null);
  assert.deepEqual(removeFromLayout(L(1), 2), L(1));
  assert.deepEqual(removeFromLayout({ direction: "h", children: [L(1), L(2)] }, 1), L(2));
  assert.deepEqual(
    removeFromLayout({ direction: "h", children: [L(1), { direction: "v", children: [L(2), L(3)] }] }, 3),
    { direction: "h", children: [L(1), L(2)] },
  );
  assert.deepEqual(
    removeFromLayout({ direction: "h", children: [L(1), L(2), L(3)] }, 2),
    { direction: "h", children: [L(1), L(3)] },
  );
  assert.deepEqual(removeFromLayout({ direction: "v", children: [L(1), L(2)] }, 9), {
    direction: "v",
    children: [L(1), L(2)],
  });
});

Deno.test("removeFromLayout keeps the sizes of what remains", () => {
  const L = (id: number) => ({ surface_id: id });
  const inner: Layout = { direction: "v", children: [L(2), L(3)], sizes: [3, 1] };
  assert.deepEqual(
    removeFromLayout({ direction: "h", children: [L(1), inner], sizes: [1, 2] }, 1),
    inner,
  );
  assert.deepEqual(
    removeFromLayout({ direction: "h", children: [L(1), L(2), L(3)], sizes: [1, 2, 3] }, 2),
    { direction: "h", children: [L(1), L(3)], sizes: [1, 3] },
  );
  const tree: Layout = { direction: "h", children: [L(1), L(4), inner], sizes: [1, 1, 2] };
  assert.deepEqual(removeFromLayout(tree, 4), { direction: "h", children: [L(1), inner], sizes: [1, 2] });
  assert.deepEqual(removeFromLayout(tree, 9), tree);
});
