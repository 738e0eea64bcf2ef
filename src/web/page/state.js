// What the tab knows: the host's panes, layout and agents as the web
// process last sent them, the tiles and the focused view, and the socket.

export const state = {
  ws: null,
  connected: false,
  hostUp: false,
  socket: "",
  input: { enabled: false, reason: "connecting" },
  workspaces: [],
  panes: new Map(), // id -> surface.list item
  agents: new Map(), // id -> { state, message, tool }
  fleet: [],
  fleetAt: 0,
  tiles: new Map(), // id -> tile
  frames: new Map(), // id -> newest screen message not yet drawn in its tile
  screens: new Map(), // id -> newest screen message
  focus: null, // { id, term, ... }
  failures: 0,
  drawn: { tiles: 0, cells: 0, focus: 0, received: 0 }, // counters, for the curious, tests and the bench
};
globalThis.paneflowWeb = state; // for people poking around in the console

/** Sends one message to the web process, when connected. */
export function send(msg) {
  if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(msg));
}
