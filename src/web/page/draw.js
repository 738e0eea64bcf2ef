// Drawing screens into terminals. One draw per animation frame for the
// whole tab: the focused view and every tile with a newer screen, each once,
// the newest screen only. The server paces the screens (each tab gets its
// share of what all tabs may draw a second; the focused pane every frame:
// docs/web.md). Tiles out of view and tiles of a hidden tab are not drawn
// (and not sent); tiles behind the focused view are drawn at most once a
// second.
import { more } from "./dom.js";
import { fit, fitFocus } from "./fit.js";
import { state } from "./state.js";

const BEHIND_FOCUS_MS = 1000;
let drawQueued = false;
let drawTimer = null;

/** Draws at the next animation frame. */
export function scheduleDraw() {
  if (drawQueued) return;
  drawQueued = true;
  if (drawTimer !== null) clearTimeout(drawTimer);
  drawTimer = null;
  requestAnimationFrame(draw);
}
function scheduleDrawIn(ms) {
  if (drawQueued || drawTimer !== null) return;
  drawTimer = setTimeout(() => {
    drawTimer = null;
    scheduleDraw();
  }, Math.max(1, Math.ceil(ms)));
}

/** Draws the newest frame of the focused pane and of the tiles that are due. */
function draw(now) {
  drawQueued = false;
  const f = state.focus;
  if (f && f.pending) {
    const m = f.pending;
    f.pending = null;
    drawFocusScreen(m);
    state.drawn.focus++;
  }
  if (document.visibilityState === "hidden") return;
  let wait = Infinity;
  for (const [id, m] of state.frames) {
    const tile = state.tiles.get(id);
    if (!tile || !tile.inView) continue; // drawn when its tile comes, or comes into view
    if (f && tile.drawnAt + BEHIND_FOCUS_MS > now) {
      wait = Math.min(wait, tile.drawnAt + BEHIND_FOCUS_MS - now);
      continue;
    }
    state.frames.delete(id);
    replay(tile.term, m, "soft");
    tile.drawnAt = now;
    tile.draws++;
    tile.gen = m.generation;
    if (!tile.scale) fit(tile);
    state.drawn.tiles++;
    state.drawn.cells += m.cols * m.rows;
  }
  if (wait !== Infinity) scheduleDrawIn(wait);
}

// A tile's terminal keeps no scrollback: instead of a full reset (RIS: new
// buffers, the renderer cleared, the viewport synced), the normal screen,
// a soft reset (DECSTR: modes, margins, attributes, charsets) and a clear.
const SOFT_RESET = "\x1b[?1049l\x1b[!p\x1b[H\x1b[2J";

/** Writes screen message `m` into `term`: after a soft reset, a full one (`true`) or a clear. */
export function replay(term, m, reset) {
  const resized = term.cols !== m.cols || term.rows !== m.rows;
  if (resized) term.resize(m.cols, m.rows);
  const tail = m.cursor_visible ? "\x1b[?25h" : "\x1b[?25l";
  const head = reset === "soft" ? SOFT_RESET : reset ? "\x1bc" : "\x1b[H\x1b[2J";
  term.write(head + m.ansi + tail);
  if (resized) {
    if (state.focus && state.focus.term === term) fitFocus();
    else {
      const tile = state.tiles.get(m.id);
      if (tile && tile.term === term) fit(tile);
    }
  }
}

// ---- the focused view: it waits while the reader has scrolled up ----------

/** Whether the focused terminal shows its newest rows. */
export function atBottom() {
  const b = state.focus.term.buffer.active;
  return b.viewportY >= b.baseY;
}

/** Draws what waited while the reader was scrolled up. */
export function applyHeld() {
  const f = state.focus;
  if (!f || !f.held) return;
  const m = f.held;
  f.held = null;
  more.classList.remove("show");
  if (m.t === "full") drawFull(m);
  else drawFocusScreen(m);
}

/** The focused pane with its scrollback (unless the reader scrolled up: then it waits). */
export function drawFull(m) {
  const f = state.focus;
  if (!atBottom()) {
    f.held = m;
    more.classList.add("show");
    return;
  }
  replay(f.term, m, true);
  f.full = true;
}

/** A newer screen between scrollback refreshes: the screen part only. */
export function drawFocusScreen(m) {
  const f = state.focus;
  if (!atBottom()) {
    if (!f.held || f.held.t !== "full") f.held = m;
    more.classList.add("show");
    return;
  }
  replay(f.term, m, !f.full);
}
