// The workspaces as the host lays them out: each a box of the workspace's
// aspect, split like its layout tree, a tile per pane.
import { $, el } from "./dom.js";
import { renderFleet } from "./fleet.js";
import { closeFocus } from "./focus.js";
import { renderHead } from "./heads.js";
import { state } from "./state.js";
import { dropTile, tileFor } from "./tiles.js";
import { sendView } from "./view.js";

/** Renders every workspace from `state.workspaces`; tiles of panes that are gone are dropped. */
export function renderLayout() {
  const root = $("#workspaces");
  const keep = new Set();
  const sections = [];
  for (const ws of state.workspaces) {
    const section = el("section", "ws");
    const title = el("div", "ws-title");
    title.append(el("span", ws.active ? "active" : "", `${ws.index}: ${ws.title || "workspace"}`));
    title.append(` · ${ws.layout} · ${ws.cols}×${ws.rows}`);
    section.append(title);
    const box = el("div", "ws-box");
    // Cells are about twice as tall as wide; the headers take a row each.
    box.style.aspectRatio = `${ws.cols * 0.6} / ${ws.rows * 1.3}`;
    if (ws.layout_tree) box.append(renderNode(ws.layout_tree, keep, "h"));
    section.append(box);
    sections.push(section);
  }
  root.replaceChildren(...sections);
  for (const [id, tile] of state.tiles) if (!keep.has(id)) dropTile(tile);
  for (const id of keep) renderHead(id);
  sendView();
  if (state.focus && !state.panes.has(state.focus.id)) closeFocus();
  renderFleet();
}

/** Size of a subtree along a direction, in cells (what its flex weight is). */
function extent(node, dir) {
  if ("surface_id" in node) {
    const p = state.panes.get(node.surface_id);
    return p ? (dir === "h" ? p.cols : p.rows) + 1 : 1;
  }
  const parts = node.children.map((c) => extent(c, dir));
  return node.direction === dir ? parts.reduce((a, b) => a + b, 0) : Math.max(...parts);
}

function renderNode(node, keep, parentDir) {
  if ("surface_id" in node) {
    const tile = tileFor(node.surface_id);
    keep.add(node.surface_id);
    tile.el.style.flex = `${extent(node, parentDir)} 1 0`;
    return tile.el;
  }
  const box = el("div", `split ${node.direction}`);
  box.style.flex = `${extent(node, parentDir)} 1 0`;
  for (const child of node.children) box.append(renderNode(child, keep, node.direction));
  return box;
}
