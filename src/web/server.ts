/**
 * `paneflow web`'s server: one HTTP listener (the loader page, the page's
 * assets, one WebSocket endpoint) in front of one host connection.
 *
 * Fan-out: the server mirrors the host once, whatever number of tabs are
 * open. While a tab is open, each pane's screen is asked for
 * (`surface.screen`) every {@link TILE_INTERVAL_MS} (a focused pane every
 * {@link FOCUS_INTERVAL_MS}) with the generation already shown, one request
 * at a time: the host answers `unchanged` from a map lookup unless the pane
 * printed, so the cost is bounded by the number of panes, not by how much
 * they print (subscribing to `surface_changed` instead costs the host one
 * event per pane per output burst: ~100/s for a pane printing a line every
 * 10 ms). The same frame then goes to every tab. Each tab holds at most the newest frame
 * of each pane waiting to be sent: a tab that reads slowly (its socket
 * buffer above {@link SEND_HIGH_WATER}) skips the frames in between and gets
 * the newest screen when it catches up, so nothing grows without bound.
 *
 * The page says which panes it shows (its tiles in view and its focused
 * pane; none while hidden): only those are fetched and sent to it. Drawing a
 * tile costs a browser far more than serving it costs the host, so the tile
 * screens sent to pages are paced by {@link TILE_CELLS_PER_SECOND}, shared by
 * the pages that show something, and go to a page together, as one message
 * (docs/web.md: what a person sees, how often, and why).
 *
 * @module
 */
import { authorized, isLoopback, sameOrigin, WS_PROTOCOL } from "./auth.ts";
import { ASSETS, loaderPage } from "./assets.ts";
import { answerFromPage, HostEvents, HostLink } from "./host_link.ts";
import { announce, isReplyPath, serveReply } from "./reply.ts";
import type { Result } from "../spec/results.ts";
import { ClientMessage, EVENT_TYPES, SECURITY_HEADERS, text } from "./messages.ts";
import { PAGE_SCREENS_MS, SEND_HIGH_WATER, Tab, TILE_CELLS_PER_SECOND } from "./tab.ts";

export { PAGE_SCREENS_MS, SEND_HIGH_WATER, TILE_CELLS_PER_SECOND };

/** A pane's screen is fetched at most this often while it changes. */
export const TILE_INTERVAL_MS = 100;
/**
 * Cells per second the host may be asked to serialize for tiles (~0.07 ms per
 * 1000 cells: bench/, docs/web.md): with more cells on screen than this every
 * {@link TILE_INTERVAL_MS}, tiles are refreshed less often, so 20 full-size
 * busy panes cost the host as much as a few.
 */
export const CELLS_PER_SECOND = 1_000_000;
/**
 * Tile requests per second at most, all panes together: each one is a round
 * trip through the host's main thread (validation, a worker message, the
 * reply) whatever the pane's size, which cost more than the serializing of
 * small tiles (bench/web.ts). Ten panes refresh every 100 ms, twenty every
 * 200 ms.
 */
export const TILE_REQUESTS_PER_SECOND = 100;
/** ... and this often while a tab shows it focused. */
export const FOCUS_INTERVAL_MS = 50;
/** A focused pane's scrollback is fetched at most this often while it changes. */
export const FULL_INTERVAL_MS = 250;
/** Rows of scrollback a focused pane shows. */
export const FOCUS_SCROLLBACK = 1000;
/** Input messages of one tab waiting for the host at most (keys typed faster than a pane takes them). */
const MAX_INPUT_IN_FLIGHT = 256;
/** The largest message a tab may send. */
const MAX_CLIENT_MESSAGE = 256 * 1024;
/** Layout and fleet are refreshed this often while tabs are open (sizes, titles, ages). */
const REFRESH_MS = 2000;
/** How often a host that went away is tried again. */
const RECONNECT_MS = 300;

/** Options of {@link startWeb}. */
export interface WebOptions {
  /** The host's socket. */
  socket: string;
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  /** Forward keys from a focused tile (`--input`). */
  input: boolean;
  token: string;
  /** Diagnostics (never the token). */
  log: (line: string) => void;
  /** Where reply links point (`--public-url`); default this server's own URL. */
  publicUrl?: string;
}

/** A running web server. */
export interface WebServer {
  /** The URL without the token. */
  url: string;
  port: number;
  /** Ends when the server has stopped. */
  finished: Promise<void>;
  close(): Promise<void>;
}

interface PaneMirror {
  id: number;
  cells: number;
  /** The generation of the screen we hold (-1: none yet). */
  shownGen: number;
  fetchedAt: number;
  fullGen: number;
  fullAt: number;
}

/** The mirror of the host that every tab shares. */
class Mirror {
  link: HostLink | null = null;
  events: HostEvents | null = null;
  up = false;
  scripting = false;
  /** The host's keystroke gate is open: dialogs can be answered (surface.answer). */
  keystrokes = false;
  panes = new Map<number, PaneMirror>();
  tabs = new Set<Tab>();
  #layoutMsg: string | null = null;
  #fleetMsg: string | null = null;
  #screens = new Map<number, string>();
  #stopped = false;
  #tick: ReturnType<typeof setTimeout> | null = null;
  #fetching = false;
  #layoutTimer: ReturnType<typeof setTimeout> | null = null;
  #fleetTimer: ReturnType<typeof setTimeout> | null = null;
  #refreshTimer: ReturnType<typeof setInterval> | null = null;
  #wake: (() => void) | null = null;

  constructor(readonly opts: WebOptions) {}

  /** Whether the page may type (`enabled`) and answer dialogs (`answer`), and why not. */
  inputState(): { enabled: boolean; reason: string | null; answer: boolean } {
    if (!this.opts.input) {
      return { enabled: false, reason: "Read-only: paneflow web was started without --input", answer: false };
    }
    if (!this.up) return { enabled: false, reason: "Read-only: the host is not reachable", answer: false };
    if (!this.scripting) {
      return {
        enabled: false,
        reason:
          'Read-only: the host\'s write gate is closed (start the host with PANEFLOW_IPC_SCRIPTING=1 or set "ai_unrestricted": true)',
        answer: false,
      };
    }
    return { enabled: true, reason: null, answer: this.keystrokes };
  }

  broadcast(key: string, msg: unknown): void {
    const text = JSON.stringify(msg);
    for (const tab of this.tabs) tab.queue(key, text);
  }

  /** What a new tab needs: the host state, the layout, the fleet and every screen we hold. */
  /** Shares {@link TILE_CELLS_PER_SECOND} among the pages that draw something. */
  reshare(): void {
    let showing = 0;
    for (const tab of this.tabs) if (tab.drawing) showing++;
    for (const tab of this.tabs) tab.share = TILE_CELLS_PER_SECOND / Math.max(1, showing);
  }

  #cellsOf(id: number): number {
    return this.panes.get(id)?.cells ?? 0;
  }

  welcome(tab: Tab): void {
    this.reshare();
    tab.queue("hello", JSON.stringify({ t: "hello", input: this.inputState(), host: this.#hostMsg() }));
    if (this.#layoutMsg) tab.queue("layout", this.#layoutMsg);
    if (this.#fleetMsg) tab.queue("fleet", this.#fleetMsg);
    for (const [id, msg] of this.#screens) {
      if (tab.wants(id)) tab.queue(`screen:${id}`, msg, this.#cellsOf(id));
    }
    this.#schedule(0);
  }

  #hostMsg() {
    return { t: "host", up: this.up, socket: this.opts.socket, input: this.inputState() };
  }

  /** Keeps the host connection, reconnecting when the host comes back. */
  async run(): Promise<void> {
    let saidDown = false;
    while (!this.#stopped) {
      const link = await HostLink.open(this.opts.socket);
      const events = link ? await HostEvents.open(this.opts.socket, EVENT_TYPES) : null;
      if (!link || !events) {
        link?.close();
        if (!saidDown) {
          this.opts.log(`paneflow web: no host answers on ${this.opts.socket}; retrying`);
          saidDown = true;
        }
        await this.#sleep(RECONNECT_MS);
        continue;
      }
      saidDown = false;
      this.link = link;
      this.events = events;
      try {
        const caps = await link.call("system.capabilities");
        this.scripting = caps.scripting;
        this.keystrokes = caps.keystrokes;
        this.up = true;
        this.opts.log(`paneflow web: connected to the host on ${this.opts.socket}`);
        this.broadcast("host", this.#hostMsg());
        await this.#refreshLayout();
        await this.#refreshFleet();
        this.#refreshTimer = setInterval(() => {
          if (this.tabs.size === 0) return;
          this.#refreshLayout().catch(() => {});
          this.#refreshFleet().catch(() => {});
        }, REFRESH_MS);
        while (!this.#stopped) {
          const ev = await events.next();
          if (ev === null) break;
          this.#onEvent(ev);
        }
      } catch { /* the host went away mid-call */ }
      if (this.#refreshTimer !== null) clearInterval(this.#refreshTimer);
      this.#refreshTimer = null;
      events.close();
      link.close();
      this.link = this.events = null;
      const wasUp = this.up;
      this.up = false;
      this.panes.clear();
      this.#screens.clear();
      if (wasUp && !this.#stopped) {
        this.opts.log(`paneflow web: the host on ${this.opts.socket} went away; waiting for it`);
        this.broadcast("host", this.#hostMsg());
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.#wake = null;
        resolve();
      }, ms);
      this.#wake = () => {
        clearTimeout(t);
        this.#wake = null;
        resolve();
      };
    });
  }

  #onEvent(ev: Record<string, unknown>): void {
    const id = typeof ev.surface_id === "number" ? ev.surface_id : null;
    switch (ev.type) {
      case "agent_state":
        if (id !== null) {
          this.broadcast(`agent:${id}`, {
            t: "agent",
            id,
            state: ev.state,
            tool: ev.tool ?? null,
            message: ev.message ?? null,
            dialog_id: ev.dialog_id ?? null,
            ts: Date.now(),
          });
        }
        this.#debounceFleet();
        return;
      case "dropped":
        // Events were shed: panes may have come and gone, agents changed state.
        this.#debounceLayout();
        this.#debounceFleet();
        this.#schedule(0);
        return;
      case "heartbeat":
        return;
      default:
        // Panes and workspaces came, went, exited or were renamed.
        this.#debounceLayout();
        this.#debounceFleet();
    }
  }

  #debounceLayout(): void {
    this.#layoutTimer ??= setTimeout(() => {
      this.#layoutTimer = null;
      this.#refreshLayout().catch(() => {});
    }, 30);
  }

  #debounceFleet(): void {
    this.#fleetTimer ??= setTimeout(() => {
      this.#fleetTimer = null;
      this.#refreshFleet().catch(() => {});
    }, 100);
  }

  async #refreshLayout(): Promise<void> {
    const link = this.link;
    if (!link) return;
    const { workspaces } = await link.call("workspace.list");
    const { surfaces } = await link.call("surface.list");
    if (link !== this.link) return;
    const seen = new Set<number>();
    for (const s of surfaces) {
      seen.add(s.surface_id);
      const pane = this.panes.get(s.surface_id);
      if (pane) pane.cells = s.cols * s.rows;
      else {
        this.panes.set(s.surface_id, {
          id: s.surface_id,
          cells: s.cols * s.rows,
          shownGen: -1,
          fetchedAt: -Infinity,
          fullGen: -1,
          fullAt: -Infinity,
        });
      }
    }
    for (const id of [...this.panes.keys()]) {
      if (!seen.has(id)) {
        this.panes.delete(id);
        this.#screens.delete(id);
      }
    }
    // Without the generations: the layout message changes (and the page redraws it) only when the layout does.
    const panes = surfaces.map(({ output_generation: _, ...rest }) => rest);
    const msg = JSON.stringify({ t: "layout", workspaces, panes });
    if (msg !== this.#layoutMsg) {
      this.#layoutMsg = msg;
      for (const tab of this.tabs) tab.queue("layout", msg);
    }
    this.#schedule(0);
  }

  async #refreshFleet(): Promise<void> {
    const link = this.link;
    if (!link) return;
    const { agents } = await link.call("fleet.list");
    if (link !== this.link) return;
    this.#fleetMsg = JSON.stringify({ t: "fleet", agents, ts: Date.now() });
    for (const tab of this.tabs) tab.queue("fleet", this.#fleetMsg);
  }

  #schedule(ms: number): void {
    if (this.#tick !== null || this.#stopped) return;
    this.#tick = setTimeout(() => {
      this.#tick = null;
      this.#fetchScreens().catch(() => {});
    }, ms);
  }

  /** Asks for the screens that are due, one request at a time. */
  async #fetchScreens(): Promise<void> {
    if (this.#fetching || !this.link || this.tabs.size === 0) return;
    this.#fetching = true;
    let next = Infinity;
    try {
      const focused = new Set<number>();
      for (const tab of this.tabs) if (tab.focus !== null) focused.add(tab.focus);
      // Only panes some tab shows (a tile in view in a visible tab, or focused) are asked for.
      const shown = [...this.panes.values()].filter((p) => [...this.tabs].some((t) => t.wants(p.id)));
      let cells = 0;
      for (const pane of shown) cells += pane.cells;
      const tileInterval = Math.max(
        TILE_INTERVAL_MS,
        (cells / CELLS_PER_SECOND) * 1000,
        (shown.length / TILE_REQUESTS_PER_SECOND) * 1000,
      );
      for (const pane of shown) {
        const link = this.link;
        if (!link) break;
        const interval = focused.has(pane.id) ? FOCUS_INTERVAL_MS : tileInterval;
        let now = performance.now();
        if (pane.fetchedAt + interval <= now) {
          pane.fetchedAt = now;
          await this.#fetchTile(link, pane);
        }
        next = Math.min(next, pane.fetchedAt + interval - performance.now());
        if (focused.has(pane.id) && pane.fullGen !== pane.shownGen) {
          now = performance.now();
          if (pane.fullAt + FULL_INTERVAL_MS <= now) {
            pane.fullAt = now;
            await this.#fetchFull(link, pane);
          }
          next = Math.min(next, pane.fullAt + FULL_INTERVAL_MS - performance.now());
        }
      }
    } finally {
      this.#fetching = false;
    }
    if (next !== Infinity && this.tabs.size > 0) this.#schedule(Math.max(1, Math.ceil(next)));
  }

  async #fetchTile(link: HostLink, pane: PaneMirror): Promise<void> {
    let r: Result<"surface.screen">;
    try {
      r = await link.call("surface.screen", {
        surface_id: pane.id,
        ...(pane.shownGen >= 0 ? { since: pane.shownGen } : {}),
      });
    } catch {
      return; // closed meanwhile, or the host is going away
    }
    if (this.panes.get(pane.id) !== pane) return;
    const gen = r.generation;
    if (r.unchanged) {
      pane.shownGen = gen;
      return;
    }
    pane.shownGen = gen;
    const msg = JSON.stringify({ t: "screen", id: pane.id, ...r });
    this.#screens.set(pane.id, msg);
    const cells = r.cols * r.rows;
    for (const tab of this.tabs) {
      // The focused pane is not held back by the tab's budget.
      if (tab.wants(pane.id)) tab.queue(`screen:${pane.id}`, msg, tab.focus === pane.id ? 0 : cells);
    }
  }

  async #fetchFull(link: HostLink, pane: PaneMirror): Promise<void> {
    let r: Result<"surface.screen">;
    try {
      r = await link.call("surface.screen", { surface_id: pane.id, scrollback: FOCUS_SCROLLBACK });
    } catch {
      return;
    }
    pane.fullGen = r.generation;
    const msg = JSON.stringify({ t: "full", id: pane.id, ...r });
    for (const tab of this.tabs) if (tab.focus === pane.id) tab.queue("full", msg);
  }

  /** Handles one message from a tab. */
  async onMessage(tab: Tab, data: unknown): Promise<void> {
    // One key: a page that keeps sending bad messages holds at most one error waiting for it.
    const fail = (message: string) => tab.queue("error", JSON.stringify({ t: "error", message }));
    if (typeof data !== "string" || data.length > MAX_CLIENT_MESSAGE) {
      return fail("Message refused: expected one JSON text message of at most 256 KiB");
    }
    let parsed;
    try {
      parsed = ClientMessage.safeParse(JSON.parse(data));
    } catch {
      return fail("Message refused: not JSON");
    }
    if (!parsed.success) return fail(`Message refused: ${parsed.error.issues[0]?.message ?? "invalid"}`);
    const msg = parsed.data;
    if (msg.t === "view") {
      const before = tab.view;
      tab.view = new Set(msg.ids);
      for (const [id, screen] of this.#screens) {
        if (!tab.wants(id)) tab.unqueue(`screen:${id}`);
        // A pane back in view (or a tab shown again) gets the newest screen at once.
        else if (before !== null && !before.has(id) && tab.focus !== id) {
          tab.queue(`screen:${id}`, screen, this.#cellsOf(id));
        }
      }
      this.reshare();
      this.#schedule(0);
      return;
    }
    if (msg.t === "focus") {
      tab.focus = msg.id;
      this.reshare();
      const pane = msg.id === null ? undefined : this.panes.get(msg.id);
      if (pane) {
        pane.fullGen = -1;
        pane.fullAt = -Infinity;
        this.#schedule(0);
      }
      return;
    }
    const input = this.inputState();
    if (!input.enabled) return fail(input.reason!);
    if (msg.t === "answer") {
      // A fleet card's button: any pane (the card names its own), not only the focused one.
      const refused = await answerFromPage(this.link, this.keystrokes, msg);
      this.#debounceFleet();
      return refused ? fail(refused) : undefined;
    }
    if (tab.focus !== msg.id) return fail(`Input refused: pane ${msg.id} is not the focused tile`);
    const link = this.link;
    if (!link) return fail("Input refused: the host is not reachable");
    if (tab.inputInFlight >= MAX_INPUT_IN_FLIGHT) {
      return fail("Input refused: too much input at once; the pane has not taken the earlier keys yet");
    }
    tab.inputInFlight++;
    try {
      await link.call(
        "surface.send_text",
        msg.t === "input"
          ? { surface_id: msg.id, text: msg.data }
          : { surface_id: msg.id, text: msg.text, paste: true },
      );
    } catch (e) {
      fail(`Input refused: ${(e as Error).message}`);
    } finally {
      tab.inputInFlight--;
    }
  }

  stop(): void {
    this.#stopped = true;
    for (const t of [this.#tick, this.#layoutTimer, this.#fleetTimer]) if (t !== null) clearTimeout(t);
    if (this.#refreshTimer !== null) clearInterval(this.#refreshTimer);
    this.events?.close();
    this.link?.close();
    this.#wake?.();
  }
}

/** The loader page (no token needed: it reads the token from the fragment). */
function loaderResponse(req: Request, loader: { html: string; csp: string }): Response {
  return new Response(req.method === "HEAD" ? null : loader.html, {
    headers: {
      ...SECURITY_HEADERS,
      "content-type": "text/html; charset=utf-8",
      "content-security-policy": loader.csp,
    },
  });
}

/** Starts the server; it runs until {@link WebServer.close}. */
export async function startWeb(opts: WebOptions): Promise<WebServer> {
  const mirror = new Mirror(opts);
  const loader = await loaderPage();
  const handler = (req: Request, info: Deno.ServeHandlerInfo<Deno.NetAddr>): Response | Promise<Response> => {
    const url = new URL(req.url);
    // A reply link carries its own credential (src/web/reply.ts), not the page's token.
    if (isReplyPath(url.pathname)) {
      return serveReply(req, { socket: opts.socket, peer: info.remoteAddr.hostname });
    }
    if (url.pathname === "/" && (req.method === "GET" || req.method === "HEAD")) {
      return loaderResponse(req, loader);
    }
    if (!authorized(req.headers, opts.token)) {
      return text(401, "Unauthorized: open the URL that paneflow web printed, with its #token=...\n", {
        "www-authenticate": 'Bearer realm="paneflow web"',
      });
    }
    if (url.pathname === "/ws") {
      if (req.headers.get("upgrade")?.toLowerCase() !== "websocket") {
        return text(400, "Expected a WebSocket upgrade\n");
      }
      if (!sameOrigin(req.headers)) return text(403, "Forbidden: WebSocket from a foreign origin\n");
      const offered = (req.headers.get("sec-websocket-protocol") ?? "").split(",").map((p) => p.trim());
      if (!offered.includes(WS_PROTOCOL)) return text(400, `Expected the "${WS_PROTOCOL}" subprotocol\n`);
      const { socket, response } = Deno.upgradeWebSocket(req, { protocol: WS_PROTOCOL, idleTimeout: 60 });
      const tab = new Tab(socket, opts.log);
      socket.onopen = () => {
        mirror.tabs.add(tab);
        mirror.welcome(tab);
      };
      socket.onmessage = (e) => void mirror.onMessage(tab, e.data);
      socket.onclose = () => {
        mirror.tabs.delete(tab);
        mirror.reshare();
        tab.dispose();
      };
      socket.onerror = () => {};
      return response;
    }
    const asset = req.method === "GET" ? ASSETS[url.pathname] : undefined;
    if (asset) {
      return new Response(asset.body, { headers: { ...SECURITY_HEADERS, "content-type": asset.type } });
    }
    return text(404, "Not found\n");
  };
  const listening = Promise.withResolvers<Deno.NetAddr>();
  const server = Deno.serve({
    hostname: opts.hostname,
    port: opts.port,
    onListen: (addr) => listening.resolve(addr as Deno.NetAddr),
    onError: () => text(500, "Internal error\n"),
  }, handler);
  const addr = await listening.promise;
  const shownHost = addr.hostname.includes(":") ? `[${addr.hostname}]` : addr.hostname;
  const url = `http://${shownHost}:${addr.port}/`;
  if (!isLoopback(addr.hostname)) {
    opts.log(
      `paneflow web: WARNING: listening on ${addr.hostname}, not loopback: anyone who can reach this address and has the token sees every pane; prefer 127.0.0.1 and an SSH port forward`,
    );
  }
  const running = mirror.run();
  await announce(opts, url);
  return {
    url,
    port: addr.port,
    finished: server.finished,
    async close() {
      mirror.stop();
      for (const tab of mirror.tabs) {
        try {
          tab.ws.close(1001, "paneflow web is stopping");
        } catch { /* gone */ }
      }
      await server.shutdown();
      await running;
    },
  };
}
