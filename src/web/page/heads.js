// The headers: a tile's id, name, command and agent badge, and the focused
// view's, with whether keys go to the pane.
import { focusEl } from "./dom.js";
import { state } from "./state.js";

/** The agent of pane `id`, when it has one worth a badge. */
function agentOf(id) {
  const a = state.agents.get(id);
  if (!a || (!a.tool && (a.state === "idle" || !a.state))) return null;
  return a;
}

/** Fills a badge: the exit, or the agent's state and what it asks. */
export function badge(span, id) {
  const p = state.panes.get(id);
  const a = agentOf(id);
  span.className = "badge";
  if (p && p.exited) {
    span.classList.add("exited");
    span.textContent = `exited ${p.exit_code}`;
    span.title = "";
    span.style.display = "";
    return;
  }
  if (!a) {
    span.style.display = "none";
    return;
  }
  span.style.display = "";
  span.classList.add(a.state);
  span.dataset.state = a.state;
  const label = a.state.replace(/_/g, " ");
  span.textContent = a.message && a.state === "waiting_for_input" ? `${label}: ${a.message}` : label;
  span.title = `${a.tool || "agent"}: ${a.state}${a.message ? ` — ${a.message}` : ""}`;
}

/** Renders pane `id`'s tile header (and the focused view's, when it is the focused pane). */
export function renderHead(id) {
  const tile = state.tiles.get(id);
  const p = state.panes.get(id);
  if (!tile || !p) return;
  const a = agentOf(id);
  // Only what changed is touched: an unchanged header costs no style or layout work.
  const key = JSON.stringify([
    p.name,
    p.cmd,
    p.cwd,
    p.exited,
    p.exit_code,
    a && [a.state, a.message, a.tool],
  ]);
  if (tile.shown.key !== key) {
    tile.shown.key = key;
    tile.head.id.textContent = `#${id}`;
    tile.head.name.textContent = p.name || "";
    tile.head.cmd.textContent = p.cmd;
    tile.head.cmd.title = `${p.cmd}\n${p.cwd}`;
    badge(tile.head.badge, id);
    tile.el.classList.toggle("exited", Boolean(p.exited));
  }
  if (state.focus && state.focus.id === id) renderFocusHead();
}

/** Renders the focused view's header. */
export function renderFocusHead() {
  const f = state.focus;
  if (!f) return;
  const p = state.panes.get(f.id);
  const head = focusEl.querySelector(".head");
  head.querySelector(".id").textContent = `#${f.id}`;
  head.querySelector(".name").textContent = p ? p.name || "" : "";
  head.querySelector(".cmd").textContent = p ? p.cmd : "";
  badge(head.querySelector(".badge"), f.id);
  const ro = head.querySelector(".ro");
  ro.textContent = state.input.enabled ? "input on: your keys go to this pane" : state.input.reason;
  ro.classList.toggle("on", state.input.enabled);
}
