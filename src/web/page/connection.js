// The WebSocket to the web process (the token as a subprotocol), and what
// each of its messages changes; it reconnects on its own, slower after
// each failure.
import { renderBanner, renderMode, showError } from "./banner.js";
import { drawFull, scheduleDraw } from "./draw.js";
import { renderFleet } from "./fleet.js";
import { renderFocusHead, renderHead } from "./heads.js";
import { renderLayout } from "./layout.js";
import { send, state } from "./state.js";
import { resendView } from "./view.js";

/** Opens the WebSocket (again after each close). */
export function connect() {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  const token = globalThis.PANEFLOW_TOKEN;
  const ws = new WebSocket(`${proto}://${location.host}/ws`, ["paneflow", `paneflow-token.${token}`]);
  state.ws = ws;
  ws.onopen = () => {
    state.connected = true;
    state.failures = 0;
    resendView();
    if (state.focus) send({ t: "focus", id: state.focus.id });
    renderBanner();
  };
  ws.onmessage = (e) => onMessage(JSON.parse(e.data));
  ws.onclose = () => {
    state.connected = false;
    state.failures++;
    renderBanner();
    setTimeout(connect, Math.min(5000, 300 * state.failures));
  };
}

function onMessage(m) {
  switch (m.t) {
    case "hello":
      state.input = m.input;
      onHost(m.host);
      break;
    case "host":
      onHost(m);
      break;
    case "layout":
      state.workspaces = m.workspaces;
      state.panes = new Map(m.panes.map((p) => [p.surface_id, p]));
      renderLayout();
      break;
    case "fleet":
      state.fleet = m.agents;
      state.fleetAt = Date.now();
      for (const a of m.agents) {
        const known = state.agents.get(a.surface_id);
        // An agent_state event newer than this list wins.
        if (!known || known.ts <= m.ts) state.agents.set(a.surface_id, { ...a, ts: m.ts });
      }
      renderFleet();
      for (const id of state.tiles.keys()) renderHead(id);
      break;
    case "agent": {
      const prev = state.agents.get(m.id) || {};
      state.agents.set(m.id, {
        ...prev,
        state: m.state,
        message: m.message,
        tool: m.tool,
        dialog_id: m.dialog_id,
        ts: m.ts,
      });
      renderHead(m.id);
      renderFleet();
      break;
    }
    case "batch":
      // Screens the server sent together (it paces them: see docs/web.md).
      for (const one of m.list) onMessage(one);
      break;
    case "screen":
      state.drawn.received++;
      state.screens.set(m.id, m);
      state.frames.set(m.id, m);
      if (state.focus && state.focus.id === m.id) state.focus.pending = m;
      scheduleDraw();
      break;
    case "full":
      if (state.focus && state.focus.id === m.id) drawFull(m);
      break;
    case "error":
      showError(m.message);
      break;
  }
}

function onHost(h) {
  const wasUp = state.hostUp;
  state.hostUp = h.up;
  state.socket = h.socket;
  if (h.input) state.input = h.input;
  if (!h.up && wasUp) {
    // Whatever comes back is a new host: its panes are new panes.
    state.panes = new Map();
    state.workspaces = [];
    state.agents.clear();
    state.fleet = [];
  }
  renderBanner();
  renderMode();
  renderFocusHead();
}
