// What is on screen. Tiles scrolled out of view are not drawn (their newest
// frame waits), and the server is told which panes this tab shows, so it
// sends no others; a hidden tab shows none, and gets the newest screens when
// it is shown again.
import { scheduleDraw } from "./draw.js";
import { send, state } from "./state.js";

/** Notes which tiles are in view (tiles.js observes each tile's element). */
export const viewObserver = new IntersectionObserver((entries) => {
  for (const e of entries) {
    const tile = state.tiles.get(Number(e.target.dataset.surfaceId));
    if (tile) tile.inView = e.isIntersecting;
  }
  sendView();
  scheduleDraw();
}, { rootMargin: "200px" });

document.addEventListener("visibilitychange", () => {
  sendView();
  scheduleDraw();
});

let sentView = null;
/** Tells the server which panes this tab shows, when that changed. */
export function sendView() {
  const ids = [];
  if (document.visibilityState !== "hidden") {
    for (const tile of state.tiles.values()) if (tile.inView) ids.push(tile.id);
    if (state.focus && !ids.includes(state.focus.id)) ids.push(state.focus.id);
  }
  ids.sort((a, b) => a - b);
  const key = ids.join(",");
  if (key === sentView || !state.ws || state.ws.readyState !== WebSocket.OPEN) return;
  sentView = key;
  send({ t: "view", ids });
}

/** Tells a new connection's server which panes this tab shows. */
export function resendView() {
  sentView = null;
  sendView();
}
