// The fleet strip: a card per agent with its state, what it asks and how
// long it has been waiting or quiet; a click focuses its pane.
import { $, el } from "./dom.js";
import { openFocus } from "./focus.js";
import { send, state } from "./state.js";

function ago(ms) {
  const s = Math.round(ms / 1000);
  return s < 60
    ? `${s}s`
    : s < 3600
    ? `${Math.floor(s / 60)}m ${s % 60}s`
    : `${Math.floor(s / 3600)}h ${Math.floor(s / 60) % 60}m`;
}

let fleetShown = null;
/** Renders the strip, when what it shows changed. */
export function renderFleet() {
  const elapsed = Date.now() - state.fleetAt;
  const rows = state.fleet.map((row) => {
    const a = state.agents.get(row.surface_id) || row;
    const base = a.state === "waiting_for_input" ? row.waiting_ms : row.idle_ms;
    const verb = a.state === "waiting_for_input" ? "waiting" : a.state === "thinking" ? "quiet" : "idle";
    return {
      id: row.surface_id,
      who: `#${row.surface_id} ${row.surface_name || ""} · ${row.tool || "?"}`,
      state: a.state,
      message: a.message || "",
      age: typeof base === "number" ? `${verb} ${ago(base + elapsed)}` : "",
      // A dialog the page may answer (surface.answer, guarded by its id).
      dialog: a.state === "waiting_for_input" && a.dialog_id && state.input.answer ? a.dialog_id : null,
    };
  });
  // The strip is rebuilt only when what it shows changed (ages tick once a second).
  const key = JSON.stringify(rows);
  if (key === fleetShown) return;
  fleetShown = key;
  const cards = rows.map((r) => {
    const card = el("div", "card");
    card.dataset.surfaceId = String(r.id);
    card.append(el("div", "who", r.who));
    card.append(el("span", `badge ${r.state}`, r.state.replace(/_/g, " ")));
    if (r.message) card.append(el("div", "msg", r.message));
    if (r.age) card.append(el("div", "age", r.age));
    if (r.dialog) card.append(answerButtons(r.id, r.dialog));
    card.addEventListener("click", () => openFocus(r.id));
    return card;
  });
  if (!cards.length) cards.push(el("span", "none", "No agents running"));
  $("#fleet").replaceChildren(...cards);
}
setInterval(() => state.fleet.length && renderFleet(), 1000);

/** Approve and Deny for the dialog `dialogId` on pane `id`. */
function answerButtons(id, dialogId) {
  const row = el("div", "answer");
  for (const [answer, label] of [["approve", "Approve"], ["deny", "Deny"]]) {
    const b = el("button", answer, label);
    b.type = "button";
    b.dataset.answer = answer;
    b.addEventListener("click", (e) => {
      e.stopPropagation(); // not a click on the card (which focuses the pane)
      row.querySelectorAll("button").forEach((x) => (x.disabled = true));
      send({ t: "answer", id, answer, dialog_id: dialogId });
    });
    row.append(b);
  }
  return row;
}
