// The lines that say how things stand: the banner (connection and host),
// the input mode, and a refusal shown for a moment in the focused view.
import { $ } from "./dom.js";
import { renderFocusHead } from "./heads.js";
import { state } from "./state.js";

/** Says whether the web process and the host are there; dims the screens while not. */
export function renderBanner() {
  const b = $("#banner");
  let text = "";
  if (!state.connected) {
    text = state.failures > 3
      ? "Lost paneflow web; retrying. If it was restarted, open the new URL it printed."
      : "Lost the connection to paneflow web; reconnecting…";
  } else if (!state.hostUp) {
    text = `The host is gone (no answer on ${state.socket}); waiting for it to come back…`;
  }
  b.textContent = text;
  b.classList.toggle("show", text !== "");
  // What is on screen is the last thing seen: dimmed until it is live again.
  $("#workspaces").classList.toggle("stale", text !== "");
  $("#hoststate").textContent = state.connected && state.hostUp ? `host: ${state.socket}` : "";
}

/** Says whether a focused pane takes keys, or why not. */
export function renderMode() {
  const m = $("#mode");
  m.textContent = state.input.enabled ? "input on: a focused pane takes your keys" : state.input.reason || "";
  m.classList.toggle("input", state.input.enabled);
}

let errorTimer = null;
/** Shows `message` in the focused view's header for 4 s. */
export function showError(message) {
  const ro = $("#focus .ro");
  ro.textContent = message;
  ro.classList.remove("on");
  clearTimeout(errorTimer);
  errorTimer = setTimeout(renderFocusHead, 4000);
}
