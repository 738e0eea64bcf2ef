/**
 * Pane layout on a workspace's virtual size: preset layouts, split trees,
 * and the rectangle (and so the PTY size) each pane gets. Siblings are
 * separated by a one-cell border, as in tmux.
 *
 * @module
 */

/** A split tree: a leaf names a surface; `h` lays children side by side. */
export type Layout =
  | { surface_id: number }
  | { direction: "h" | "v"; children: Layout[]; sizes?: number[] };

/** Layout presets. */
export type LayoutPreset = "even_h" | "even_v" | "main_vertical" | "tiled";

/** Where a pane sits and how big it is, in cells. */
export interface Rect {
  x: number;
  y: number;
  cols: number;
  rows: number;
}

function leaf(id: number): Layout {
  return { surface_id: id };
}

function node(direction: "h" | "v", children: Layout[]): Layout {
  return children.length === 1 ? children[0] : { direction, children };
}

/** Builds the tree of a preset for panes in order. */
export function presetLayout(preset: LayoutPreset, ids: number[]): Layout | null {
  if (ids.length === 0) return null;
  switch (preset) {
    case "even_h":
      return node("h", ids.map(leaf));
    case "even_v":
      return node("v", ids.map(leaf));
    case "main_vertical":
      return ids.length === 1 ? leaf(ids[0]) : node("h", [leaf(ids[0]), node("v", ids.slice(1).map(leaf))]);
    case "tiled": {
      const rows = Math.ceil(Math.sqrt(ids.length));
      const perRow = Math.ceil(ids.length / rows);
      const lines: Layout[] = [];
      for (let i = 0; i < ids.length; i += perRow) {
        lines.push(node("h", ids.slice(i, i + perRow).map(leaf)));
      }
      return node("v", lines);
    }
  }
}

/** Surface ids of a tree, in order. */
export function layoutLeaves(tree: Layout | null): number[] {
  if (!tree) return [];
  if ("surface_id" in tree) return [tree.surface_id];
  return tree.children.flatMap(layoutLeaves);
}

/**
 * Splits `length` cells among children by weight, one border cell between
 * neighbours. Boundaries are rounded from running totals, so equal weights
 * give sizes that differ by at most one cell; every child gets at least one.
 */
function divide(length: number, weights: number[]): number[] {
  const n = weights.length;
  const usable = Math.max(n, length - (n - 1));
  const sum = weights.reduce((a, b) => a + b, 0);
  const w = sum > 0 ? weights : weights.map(() => 1);
  const total = sum > 0 ? sum : n;
  const out: number[] = [];
  let acc = 0;
  let prev = 0;
  for (let i = 0; i < n; i++) {
    acc += w[i];
    const ideal = i === n - 1 ? usable : Math.floor((usable * acc) / total);
    // Leave one cell for each child still to come.
    const end = Math.min(usable - (n - 1 - i), Math.max(prev + 1, ideal));
    out.push(end - prev);
    prev = end;
  }
  return out;
}

/** The rectangle of every pane when the tree fills `cols` x `rows`. */
export function layoutRects(tree: Layout | null, cols: number, rows: number): Map<number, Rect> {
  const out = new Map<number, Rect>();
  const walk = (t: Layout, r: Rect) => {
    if ("surface_id" in t) {
      out.set(t.surface_id, r);
      return;
    }
    const weights = t.sizes && t.sizes.length === t.children.length ? t.sizes : t.children.map(() => 1);
    const along = t.direction === "h" ? r.cols : r.rows;
    const parts = divide(along, weights);
    let pos = t.direction === "h" ? r.x : r.y;
    t.children.forEach((child, i) => {
      const size = parts[i];
      walk(
        child,
        t.direction === "h"
          ? { x: pos, y: r.y, cols: size, rows: r.rows }
          : { x: r.x, y: pos, cols: r.cols, rows: size },
      );
      pos += size + 1;
    });
  };
  if (tree) walk(tree, { x: 0, y: 0, cols, rows });
  return out;
}

/**
 * Splits the pane `target` in `direction`, the new pane after it (`h`: to the
 * right, `v`: below). Within a node of the same direction the new pane joins
 * as a sibling and sizes are evened out.
 */
export function splitLayout(
  tree: Layout | null,
  target: number | null,
  newId: number,
  direction: "h" | "v",
): Layout {
  if (!tree) return leaf(newId);
  const at = target ?? layoutLeaves(tree).at(-1)!;
  const visit = (t: Layout): Layout => {
    if ("surface_id" in t) {
      return t.surface_id === at ? { direction, children: [t, leaf(newId)] } : t;
    }
    const index = t.children.findIndex((c) => "surface_id" in c && c.surface_id === at);
    if (index >= 0 && t.direction === direction) {
      const children = [...t.children];
      children.splice(index + 1, 0, leaf(newId));
      return { direction, children };
    }
    return { ...t, children: t.children.map(visit) };
  };
  return visit(tree);
}

/** Removes a pane; nodes left with one child collapse into it. Other sizes are kept. */
export function removeFromLayout(tree: Layout | null, id: number): Layout | null {
  if (!tree) return null;
  if ("surface_id" in tree) return tree.surface_id === id ? null : tree;
  const mapped = tree.children.map((c) => removeFromLayout(c, id));
  if (mapped.every((c, i) => c === tree.children[i])) return tree;
  const children = mapped.filter((c): c is Layout => c !== null);
  if (children.length === 0) return null;
  if (children.length === 1) return children[0];
  const out: Layout = { direction: tree.direction, children };
  if (tree.sizes && tree.sizes.length === tree.children.length) {
    out.sizes = tree.sizes.filter((_, i) => mapped[i] !== null);
  }
  return out;
}
