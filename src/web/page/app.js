// paneflow web: the page. Plain browser JavaScript, loaded by the loader
// page after xterm.js (globalThis.Terminal) with the token in
// globalThis.PANEFLOW_TOKEN. Every tile is an xterm.js terminal of the
// pane's own size that replays the host's screen (surface.screen frames),
// scaled to fit its place in the host's layout.
(() => {
  "use strict";
  const token = globalThis.PANEFLOW_TOKEN;
  const $ = (sel) => document.querySelector(sel);
  const el = (tag, cls, text) => {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  };

  document.body.replaceChildren();
  const app = el("div");
  app.id = "app";
  app.innerHTML = `
    <div id="top"><h1>paneflow</h1><span id="hoststate"></span><span id="mode"></span></div>
    <div id="banner"></div>
    <div id="fleet"></div>
    <div id="workspaces"></div>
    <div id="focus"><div class="head"><span class="id"></span><span class="name"></span><span class="cmd"></span>
      <span class="badge"></span><span class="ro"></span><button type="button">Close (Esc)</button></div>
      <div class="body"><div class="scaler"></div><div class="more">new output below — scroll down</div></div></div>`;
  document.body.append(app);

  const state = {
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

  const THEME = { background: "#000000", foreground: "#d7dae0" };
  const FONT = { fontFamily: "DejaVu Sans Mono, Menlo, Consolas, monospace", fontSize: 13, lineHeight: 1 };

  // ---- the connection ----------------------------------------------------
  function connect() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    const ws = new WebSocket(`${proto}://${location.host}/ws`, ["paneflow", `paneflow-token.${token}`]);
    state.ws = ws;
    ws.onopen = () => {
      state.connected = true;
      state.failures = 0;
      sentView = null;
      sendView();
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
  function send(msg) {
    if (state.ws && state.ws.readyState === WebSocket.OPEN) state.ws.send(JSON.stringify(msg));
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

  function renderBanner() {
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
  function renderMode() {
    const m = $("#mode");
    m.textContent = state.input.enabled
      ? "input on: a focused pane takes your keys"
      : state.input.reason || "";
    m.classList.toggle("input", state.input.enabled);
  }
  let errorTimer = null;
  function showError(message) {
    const ro = $("#focus .ro");
    ro.textContent = message;
    ro.classList.remove("on");
    clearTimeout(errorTimer);
    errorTimer = setTimeout(renderFocusHead, 4000);
  }

  // ---- layout ------------------------------------------------------------
  function renderLayout() {
    const root = $("#workspaces");
    const keep = new Set();
    const sections = [];
    for (const ws of state.workspaces) {
      const section = el("section", "ws");
      const title = el("div", "ws-title");
      title.append(el("span", ws.active ? "active" : "", `${ws.index}: ${ws.title || "workspace"}`));
      title.append(` · ${ws.layout} · ${ws.cols}×${ws.rows}`);
      section.append(title);
      const box = el("div", "ws-box");
      // Cells are about twice as tall as wide; the headers take a row each.
      box.style.aspectRatio = `${ws.cols * 0.6} / ${ws.rows * 1.3}`;
      if (ws.layout_tree) box.append(renderNode(ws.layout_tree, keep, "h"));
      section.append(box);
      sections.push(section);
    }
    root.replaceChildren(...sections);
    for (const [id, tile] of state.tiles) {
      if (!keep.has(id)) {
        viewObserver.unobserve(tile.el);
        tile.resizeObserver.disconnect();
        tile.term.dispose();
        state.tiles.delete(id);
        state.frames.delete(id);
        state.screens.delete(id);
      }
    }
    for (const id of keep) renderHead(id);
    sendView();
    if (state.focus && !state.panes.has(state.focus.id)) closeFocus();
    renderFleet();
  }

  /** Size of a subtree along a direction, in cells (what its flex weight is). */
  function extent(node, dir) {
    if ("surface_id" in node) {
      const p = state.panes.get(node.surface_id);
      return p ? (dir === "h" ? p.cols : p.rows) + 1 : 1;
    }
    const parts = node.children.map((c) => extent(c, dir));
    return node.direction === dir ? parts.reduce((a, b) => a + b, 0) : Math.max(...parts);
  }

  function renderNode(node, keep, parentDir) {
    if ("surface_id" in node) {
      const tile = tileFor(node.surface_id);
      keep.add(node.surface_id);
      tile.el.style.flex = `${extent(node, parentDir)} 1 0`;
      return tile.el;
    }
    const box = el("div", `split ${node.direction}`);
    box.style.flex = `${extent(node, parentDir)} 1 0`;
    for (const child of node.children) box.append(renderNode(child, keep, node.direction));
    return box;
  }

  function tileFor(id) {
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

  // Every terminal uses the same font: one cell's size, measured once (a forced layout).
  let cell = null;
  function cellSize(term, scaler) {
    if (cell) return cell;
    const inner = scaler.querySelector(".xterm-screen");
    if (!inner || !inner.offsetWidth || !inner.offsetHeight) return null;
    cell = { w: inner.offsetWidth / term.cols, h: inner.offsetHeight / term.rows };
    return cell;
  }

  /** Scales a terminal to fit its box, keeping its aspect (on resizes only: it reads no layout). */
  function fit(tile) {
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

  // A web font that loads later changes the cell: measure again.
  if (document.fonts) {
    document.fonts.addEventListener("loadingdone", () => {
      cell = null;
      for (const tile of state.tiles.values()) fit(tile);
      fitFocus();
    });
  }

  // ---- what is on screen -------------------------------------------------
  // Tiles scrolled out of view are not drawn (their newest frame waits), and
  // the server is told which panes this tab shows, so it sends no others; a
  // hidden tab shows none, and gets the newest screens when it is shown again.
  const viewObserver = new IntersectionObserver((entries) => {
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
  function sendView() {
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

  function agentOf(id) {
    const a = state.agents.get(id);
    if (!a || (!a.tool && (a.state === "idle" || !a.state))) return null;
    return a;
  }

  function badge(span, id) {
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

  function renderHead(id) {
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

  // ---- the fleet strip ---------------------------------------------------
  function ago(ms) {
    const s = Math.round(ms / 1000);
    return s < 60
      ? `${s}s`
      : s < 3600
      ? `${Math.floor(s / 60)}m ${s % 60}s`
      : `${Math.floor(s / 3600)}h ${Math.floor(s / 60) % 60}m`;
  }
  let fleetShown = null;
  function renderFleet() {
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

  // ---- drawing -----------------------------------------------------------
  // One draw per animation frame for the whole tab: the focused view and
  // every tile with a newer screen, each once, the newest screen only. The
  // server paces the screens (each tab gets its share of what all tabs may
  // draw a second; the focused pane every frame: docs/web.md). Tiles out of
  // view and tiles of a hidden tab are not drawn (and not sent); tiles behind
  // the focused view are drawn at most once a second.
  const BEHIND_FOCUS_MS = 1000;
  let drawQueued = false;
  let drawTimer = null;
  function scheduleDraw() {
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
  function replay(term, m, reset) {
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

  // ---- focus -------------------------------------------------------------
  const focusEl = $("#focus");
  const focusBody = focusEl.querySelector(".body");
  const focusScaler = focusEl.querySelector(".scaler");
  const more = focusEl.querySelector(".more");
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

  function openFocus(id) {
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

  function closeFocus() {
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

  /** Scales the focused terminal to fit (on resizes only: it reads no layout but once). */
  let focusBox = { w: 0, h: 0 };
  function fitFocus() {
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

  function atBottom() {
    const b = state.focus.term.buffer.active;
    return b.viewportY >= b.baseY;
  }
  function applyHeld() {
    const f = state.focus;
    if (!f || !f.held) return;
    const m = f.held;
    f.held = null;
    more.classList.remove("show");
    if (m.t === "full") drawFull(m);
    else drawFocusScreen(m);
  }

  /** The focused pane with its scrollback (unless the reader scrolled up: then it waits). */
  function drawFull(m) {
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
  function drawFocusScreen(m) {
    const f = state.focus;
    if (!atBottom()) {
      if (!f.held || f.held.t !== "full") f.held = m;
      more.classList.add("show");
      return;
    }
    replay(f.term, m, !f.full);
  }

  function renderFocusHead() {
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

  renderMode();
  renderBanner();
  renderFleet();
  connect();
})();
