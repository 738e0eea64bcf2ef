// Scaling terminals to their boxes. Every terminal uses the same font: one
// cell's size is measured once (a forced layout); after that a fit reads no
// layout, and runs on resizes only.
import { focusBody, focusScaler } from "./dom.js";
import { state } from "./state.js";

let cell = null;
/** One cell's size in CSS pixels, or null before the first terminal is laid out. */
export function cellSize(term, scaler) {
  if (cell) return cell;
  const inner = scaler.querySelector(".xterm-screen");
  if (!inner || !inner.offsetWidth || !inner.offsetHeight) return null;
  cell = { w: inner.offsetWidth / term.cols, h: inner.offsetHeight / term.rows };
  return cell;
}

/** Scales a tile's terminal to fit its box, keeping its aspect. */
export function fit(tile) {
  if (!tile) return;
  const c = cellSize(tile.term, tile.scaler);
  const { w: W, h: H } = tile.box;
  if (!c || !W || !H) return;
  const scale = Math.min(W / (c.w * tile.term.cols), H / (c.h * tile.term.rows));
  if (scale === tile.scale) return;
  tile.scale = scale;
  // Its own compositing layer (translateZ): a redraw re-records and rasterizes this tile
  // only, not every tile of the page; the layer is rasterized at this scale, so text stays sharp.
  tile.scaler.style.transform = `translateZ(0) scale(${scale})`;
}

/** Scales the focused terminal to fit (at most twice its size). */
let focusBox = { w: 0, h: 0 };
export function fitFocus() {
  const f = state.focus;
  if (!f) return;
  const c = cellSize(f.term, focusScaler);
  const { w: W, h: H } = focusBox;
  if (!c || !W || !H) return;
  const scale = Math.min(W / (c.w * f.term.cols), H / (c.h * f.term.rows), 2);
  if (scale === f.scale) return;
  f.scale = scale;
  focusScaler.style.transform = `scale(${scale})`;
}
new ResizeObserver((entries) => {
  const r = entries[entries.length - 1].contentRect;
  focusBox = { w: r.width, h: r.height };
  fitFocus();
}).observe(focusBody);

// A web font that loads later changes the cell: measure again.
if (document.fonts) {
  document.fonts.addEventListener("loadingdone", () => {
    cell = null;
    for (const tile of state.tiles.values()) fit(tile);
    fitFocus();
  });
}
