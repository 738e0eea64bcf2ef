// The focused view: one pane, large, with its scrollback; with input on,
// it takes the reader's keys and pastes.
import { focusEl, focusScaler, FONT, more, THEME } from "./dom.js";
import { showError } from "./banner.js";
import { applyHeld, atBottom, drawFocusScreen, scheduleDraw } from "./draw.js";
import { fitFocus } from "./fit.js";
import { renderFocusHead } from "./heads.js";
import { send, state } from "./state.js";
import { sendView } from "./view.js";

focusEl.querySelector("button").addEventListener("click", () => closeFocus());
more.addEventListener("click", () => {
  if (!state.focus) return;
  state.focus.term.scrollToBottom();
  applyHeld();
});
// Capture phase: xterm stops the keys it handles from going further.
globalThis.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && state.focus && !state.input.enabled) closeFocus();
}, true);
// Pasted text goes as a paste: the host brackets it when the program asked for that.
focusScaler.addEventListener("paste", (e) => {
  e.preventDefault();
  e.stopImmediatePropagation();
  const text = e.clipboardData ? e.clipboardData.getData("text/plain") : "";
  if (!text || !state.focus) return;
  if (!state.input.enabled) return showError(state.input.reason);
  send({ t: "paste", id: state.focus.id, text });
}, true);

/** Opens pane `id` in the focused view (the newest screen at once, its scrollback when it comes). */
export function openFocus(id) {
  if (state.focus && state.focus.id === id) return;
  closeFocus();
  const p = state.panes.get(id) || { cols: 80, rows: 24 };
  focusScaler.replaceChildren();
  const term = new Terminal({
    cols: p.cols,
    rows: p.rows,
    scrollback: 5000,
    disableStdin: !state.input.enabled,
    cursorBlink: state.input.enabled,
    theme: THEME,
    ...FONT,
  });
  term.open(focusScaler);
  state.focus = { id, term, held: null, full: false, pending: null, scale: 0 };
  focusEl.classList.add("show");
  focusEl.dataset.surfaceId = String(id);
  term.onData((data) => {
    if (!state.input.enabled) return showError(state.input.reason);
    send({ t: "input", id, data });
  });
  term.onScroll(() => {
    if (atBottom()) applyHeld();
  });
  // Until the scrollback comes, the newest screen.
  const last = state.screens.get(id);
  if (last) drawFocusScreen(last);
  renderFocusHead();
  send({ t: "focus", id });
  sendView();
  fitFocus();
  if (state.input.enabled) term.focus();
}

/** Closes the focused view. */
export function closeFocus() {
  if (!state.focus) return;
  state.focus.term.dispose();
  state.focus = null;
  focusEl.classList.remove("show");
  delete focusEl.dataset.surfaceId;
  send({ t: "focus", id: null });
  sendView();
  // The tiles behind it were drawn once a second: now the newest of each.
  scheduleDraw();
}
