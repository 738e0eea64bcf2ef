// A tile: an xterm.js terminal of the pane's own size that replays the
// host's screen, scaled to fit its place in the layout; a click focuses it.
import { el, FONT, THEME } from "./dom.js";
import { fit } from "./fit.js";
import { openFocus } from "./focus.js";
import { state } from "./state.js";
import { viewObserver } from "./view.js";

/** Pane `id`'s tile, made on first use. */
export function tileFor(id) {
  let tile = state.tiles.get(id);
  if (tile) return tile;
  const p = state.panes.get(id) || { cols: 80, rows: 24 };
  const root = el("div", "tile");
  root.dataset.surfaceId = String(id);
  const head = el("div", "head");
  const parts = {
    id: el("span", "id"),
    name: el("span", "name"),
    cmd: el("span", "cmd"),
    badge: el("span", "badge"),
  };
  head.append(parts.id, parts.name, parts.cmd, parts.badge);
  const screen = el("div", "screen");
  const scaler = el("div", "scaler");
  screen.append(scaler);
  root.append(head, screen);
  const term = new Terminal({
    cols: p.cols,
    rows: p.rows,
    scrollback: 0,
    disableStdin: true,
    cursorBlink: false,
    theme: THEME,
    ...FONT,
  });
  term.open(scaler);
  tile = {
    id,
    el: root,
    head: parts,
    shown: {}, // what the header shows, so unchanged text is not set again
    screen,
    scaler,
    term,
    gen: -1,
    inView: false, // on screen (IntersectionObserver)
    drawnAt: -Infinity,
    draws: 0,
    box: { w: 0, h: 0 }, // the screen's box, from the ResizeObserver
    scale: 0,
    resizeObserver: new ResizeObserver((entries) => {
      const r = entries[entries.length - 1].contentRect;
      tile.box = { w: r.width, h: r.height };
      fit(tile);
    }),
  };
  state.tiles.set(id, tile);
  root.addEventListener("click", () => openFocus(id));
  tile.resizeObserver.observe(screen);
  viewObserver.observe(root);
  return tile;
}

/** Drops a tile, and the screens that wait for it. */
export function dropTile(tile) {
  viewObserver.unobserve(tile.el);
  tile.resizeObserver.disconnect();
  tile.term.dispose();
  state.tiles.delete(tile.id);
  state.frames.delete(tile.id);
  state.screens.delete(tile.id);
}
