/**
 * The usage service: follows each pane's agent log (the path its hooks
 * name), adds what it finds to the ledger, keeps the ledger in a state file
 * that survives host restarts, and publishes `usage_changed` (at most one per
 * pane per {@link CHANGED_MS}). Files are read from the byte offset where the
 * last read stopped, whole lines only.
 *
 * @module
 */
import type { EventBus } from "../core/bus.ts";
import { RpcError } from "../errors.ts";
import { ErrorCode } from "../spec/codes.ts";
import type { Registry, Surface } from "../core/registry.ts";
import {
  addRecords,
  type Budget,
  emptyLedger,
  type GroupBy,
  type LedgerData,
  rounded,
  summarize,
  type Totals,
} from "./ledger.ts";
import type { Price } from "./prices.ts";
import { kindOfPath, parseLine } from "./records.ts";

/** `usage_changed` is published at most this often per pane. */
export const CHANGED_MS = 500;
/** The state file is written this long after the last change. */
const SAVE_MS = 200;
/** After a hook, its log is read again this long after it (ms). */
const REREAD_MS = [250, 1000, 3000];
/** At most this much of a log is read per pass. */
const CHUNK = 4 << 20;

/** What the service needs of the host. */
export interface UsageHost {
  registry: Registry;
  bus: EventBus;
  prices: Readonly<Record<string, Price>>;
  /** The state file (`usage.json`), or null to keep nothing on disk. */
  file: string | null;
  log: (line: string) => void;
  /** The budget every agent pane starts with (config `usage.budget`). */
  budget?: { usd?: number; tokens?: number; per: "pane" | "workspace"; hard: boolean };
  /** Interrupts a pane's agent (a hard budget): the Esc key. */
  interrupt?: (surfaceId: number) => Promise<unknown>;
}

/** A `usage.get` answer. */
export interface UsageAnswer {
  by: GroupBy;
  since: number | null;
  total: Totals;
  groups: (Totals & {
    key: string;
    surface_id?: number;
    name?: string | null;
    workspace?: string;
    agent?: string;
    models?: string[];
    live?: boolean;
  })[];
}

/** A `usage.budget` answer. */
export interface BudgetAnswer {
  target: string;
  usd: number | null;
  tokens: number | null;
  per: "pane" | "workspace";
  hard: boolean;
  spent_usd: number;
  spent_tokens: number;
  over: boolean;
}

/** The ledger of one host. */
export class UsageService {
  #data: LedgerData = emptyLedger();
  /** This host run's id: pane keys are `<run>:<surface id>`. */
  readonly run = Date.now().toString(36);
  #reading = new Map<string, Promise<void>>();
  #again = new Set<string>();
  #saveTimer: ReturnType<typeof setTimeout> | null = null;
  #changed = new Map<string, { dirty: boolean; timer: ReturnType<typeof setTimeout> | 0 }>();
  #disposed = false;
  #later = new Map<string, ReturnType<typeof setTimeout>[]>();

  constructor(private readonly _host: UsageHost) {}

  /** Loads the state file (a missing or unreadable one starts an empty ledger, said in the log). */
  async load(): Promise<void> {
    const file = this._host.file;
    if (!file) return;
    try {
      const data = JSON.parse(await Deno.readTextFile(file));
      if (data?.version === 1 && data.messages && data.sources && data.panes && data.turns) this.#data = data;
      else this._host.log(`usage: ignoring ${file}: not a ledger of this version`);
    } catch (e) {
      if (!(e instanceof Deno.errors.NotFound)) {
        this._host.log(`usage: cannot read ${file}: ${(e as Error).message}`);
      }
    }
  }

  /** The ledger key of a pane of this host. */
  paneKey(surfaceId: number): string {
    return `${this.run}:${surfaceId}`;
  }

  /**
   * A hook of pane `s` named its agent's log: follow it, and read what is new.
   * Returns once the read is done.
   */
  async observe(s: Surface, tool: string, path: string): Promise<void> {
    if (this.#disposed || !path.endsWith(".jsonl") || !path.startsWith("/")) return;
    const key = this.paneKey(s.id);
    this.#data.panes[key] = {
      key,
      surface_id: s.id,
      name: s.name,
      workspace: s.workspace.title,
      agent: tool,
    };
    this.#data.sources[path] ??= { kind: kindOfPath(path), pane: key, offset: 0, state: {} };
    const start = this._host.budget;
    if (start) {
      const target = start.per === "pane" ? `pane:${key}` : `workspace:${s.workspace.title}`;
      (this.#data.budgets ??= {})[target] ??= { ...start };
    }
    this.#readLater(path);
    await this.#read(path);
  }

  /**
   * An agent may append to its log after the hook that named it has run (Claude Code's Stop hook
   * can beat the last lines to the file): read again a little later, as the hooks of the next turn would.
   */
  #readLater(path: string): void {
    const timers: ReturnType<typeof setTimeout>[] = [];
    for (const ms of REREAD_MS) {
      timers.push(setTimeout(() => {
        if (ms === REREAD_MS[REREAD_MS.length - 1]) this.#later.delete(path);
        if (!this.#disposed) void this.#read(path);
      }, ms));
    }
    for (const t of this.#later.get(path) ?? []) clearTimeout(t);
    this.#later.set(path, timers);
  }

  /** Reads what is new in `path`; a read asked for during one runs again after it. */
  #read(path: string): Promise<void> {
    const running = this.#reading.get(path);
    if (running) {
      this.#again.add(path);
      return running;
    }
    const p = (async () => {
      do {
        this.#again.delete(path);
        await this.#readOnce(path).catch((e) =>
          this._host.log(`usage: cannot read ${path}: ${(e as Error).message}`)
        );
      } while (this.#again.has(path));
    })().finally(() => this.#reading.delete(path));
    this.#reading.set(path, p);
    return p;
  }

  async #readOnce(path: string): Promise<void> {
    const src = this.#data.sources[path];
    if (!src) return;
    using f = await Deno.open(path, { read: true });
    const size = (await f.stat()).size;
    // A shorter file was replaced or truncated: read it again (the keys keep counts single).
    if (size < src.offset) src.offset = 0;
    const file = path.slice(path.lastIndexOf("/") + 1);
    let changed = false;
    while (src.offset < size) {
      const buf = new Uint8Array(Math.min(CHUNK, size - src.offset));
      await f.seek(src.offset, Deno.SeekMode.Start);
      let n = 0;
      while (n < buf.length) {
        const got = await f.read(buf.subarray(n));
        if (got === null) break;
        n += got;
      }
      const end = buf.subarray(0, n).lastIndexOf(10);
      if (end < 0) break; // a line still being written
      const text = new TextDecoder().decode(buf.subarray(0, end));
      for (const line of text.split("\n")) {
        if (line) {
          changed = addRecords(this.#data, src.pane, parseLine(src.kind, line, src.state, file)) || changed;
        }
      }
      src.offset += end + 1;
    }
    if (changed) {
      this.#onChange(src.pane);
      this.#checkBudget(src.pane);
    }
    this.#scheduleSave();
  }

  #onChange(pane: string): void {
    const open = this.#changed.get(pane);
    if (open) {
      open.dirty = true;
      return;
    }
    this.#publish(pane);
    // Coalesced: while the window is open, changes wait for its end and make one event.
    const window = { dirty: false, timer: 0 as ReturnType<typeof setTimeout> | 0 };
    const close = () => {
      if (window.dirty && !this.#disposed) {
        window.dirty = false;
        this.#publish(pane);
        window.timer = setTimeout(close, CHANGED_MS);
      } else this.#changed.delete(pane);
    };
    window.timer = setTimeout(close, CHANGED_MS);
    this.#changed.set(pane, window);
  }

  #publish(pane: string): void {
    const info = this.#data.panes[pane];
    if (!info) return;
    const { total } = summarize(this.#data, {
      by: "pane",
      pane: (p) => p.key === pane,
      prices: this._host.prices,
    });
    this._host.bus.publish({
      type: "usage_changed",
      surface_id: info.surface_id,
      agent: info.agent,
      ...rounded(total),
    });
  }

  /** Sums for `usage.get`. */
  get(opts: { by?: GroupBy; since?: number; surfaceId?: number }): UsageAnswer {
    const by = opts.by ?? "pane";
    const only = opts.surfaceId === undefined ? undefined : this.paneKey(opts.surfaceId);
    const { total, groups } = summarize(this.#data, {
      by,
      since: opts.since,
      pane: only ? (p) => p.key === only : undefined,
      prices: this._host.prices,
    });
    const out: UsageAnswer["groups"] = [];
    for (const [key, g] of groups) {
      const row: UsageAnswer["groups"][number] = { key, ...rounded(g.totals), models: [...g.models].sort() };
      if (by === "pane") {
        const p = this.#data.panes[key];
        const live = key.startsWith(`${this.run}:`) && this._host.registry.surfaces.has(p.surface_id);
        Object.assign(row, {
          surface_id: p.surface_id,
          name: p.name,
          workspace: p.workspace,
          agent: p.agent,
          live,
        });
      }
      out.push(row);
    }
    out.sort((a, b) =>
      b.cost_usd - a.cost_usd || b.total_tokens - a.total_tokens || a.key.localeCompare(b.key)
    );
    return { by, since: opts.since ?? null, total: rounded(total), groups: out };
  }

  /** A live pane's totals (`surface.list`'s cost column), or null when it spent nothing known. */
  paneTotals(surfaceId: number): Totals | null {
    const key = this.paneKey(surfaceId);
    if (!this.#data.panes[key]) return null;
    return rounded(
      summarize(this.#data, { by: "pane", pane: (p) => p.key === key, prices: this._host.prices }).total,
    );
  }

  /** The budget that governs pane `key`, and its target: the pane's own, else its workspace's. */
  #budgetOf(key: string): { target: string; budget: Budget } | null {
    const budgets = this.#data.budgets ?? {};
    const pane = this.#data.panes[key];
    for (const target of [`pane:${key}`, pane ? `workspace:${pane.workspace}` : ""]) {
      if (budgets[target]) return { target, budget: budgets[target] };
    }
    return null;
  }

  /** What a budget's target has spent, and the larger of its two fractions. */
  #spent(target: string, b: Budget): { usd: number; tokens: number; ratio: number } {
    const colon = target.indexOf(":");
    const [kind, name] = [target.slice(0, colon), target.slice(colon + 1)];
    const { total } = summarize(this.#data, {
      by: "pane",
      pane: (p) => kind === "pane" ? p.key === name : p.workspace === name,
      prices: this._host.prices,
    });
    const ratio = Math.max(b.usd ? total.cost_usd / b.usd : 0, b.tokens ? total.total_tokens / b.tokens : 0);
    return { usd: Math.round(total.cost_usd * 1e6) / 1e6, tokens: total.total_tokens, ratio };
  }

  #checkBudget(key: string): void {
    const found = this.#budgetOf(key);
    const pane = this.#data.panes[key];
    if (!found || !pane) return;
    const { target, budget } = found;
    const spent = this.#spent(target, budget);
    const event = (type: string) =>
      this._host.bus.publish({
        type,
        surface_id: pane.surface_id,
        target: this.#targetName(target),
        usd: budget.usd ?? null,
        tokens: budget.tokens ?? null,
        spent_usd: spent.usd,
        spent_tokens: spent.tokens,
      });
    if (spent.ratio >= 0.8 && !budget.warned) {
      budget.warned = true;
      event("budget_warning");
    }
    if (spent.ratio >= 1 && !budget.exceeded) {
      budget.exceeded = true;
      event("budget_exceeded");
      const live = key.startsWith(`${this.run}:`) && this._host.registry.surfaces.has(pane.surface_id);
      if (budget.hard && live) void this._host.interrupt?.(pane.surface_id).catch(() => {});
    }
  }

  #targetName(target: string): string {
    if (target.startsWith("workspace:")) return `workspace "${target.slice(10)}"`;
    const p = this.#data.panes[target.slice(5)];
    return p ? `pane ${p.surface_id}${p.name ? ` ("${p.name}")` : ""}` : target;
  }

  /** Why a submit to pane `surfaceId` is refused: its budget is spent. Null when it is not. */
  refusal(surfaceId: number): string | null {
    const found = this.#budgetOf(this.paneKey(surfaceId));
    if (!found) return null;
    const spent = this.#spent(found.target, found.budget);
    if (spent.ratio < 1) return null;
    const { usd, tokens } = found.budget;
    const limit = [usd ? `$${usd}` : "", tokens ? `${tokens} tokens` : ""].filter(Boolean).join(" or ");
    return `The budget of ${this.#targetName(found.target)} (${limit}) is spent: $${spent.usd} and ` +
      `${spent.tokens} tokens so far; raise it with "paneflow budget ${surfaceId} --add <usd>" or --usd/--tokens`;
  }

  /** Sets or raises the budget of pane `s` (or of its workspace). */
  setBudget(
    s: Surface,
    p: { usd?: number; tokens?: number; add_usd?: number; per?: "pane" | "workspace"; hard?: boolean },
  ): BudgetAnswer {
    const key = this.paneKey(s.id);
    this.#data.panes[key] ??= {
      key,
      surface_id: s.id,
      name: s.name,
      workspace: s.workspace.title,
      agent: "",
    };
    const old = this.#budgetOf(key);
    const per = p.per ?? old?.budget.per ?? "pane";
    const target = per === "pane" ? `pane:${key}` : `workspace:${s.workspace.title}`;
    const budgets = this.#data.budgets ??= {};
    const prev = budgets[target] ?? (old?.target === target ? old.budget : undefined);
    const b: Budget = { per, hard: p.hard ?? prev?.hard ?? false };
    const spentNow = this.#spent(target, b);
    const usd = p.usd ?? (p.add_usd !== undefined ? (prev?.usd ?? spentNow.usd) + p.add_usd : prev?.usd);
    const tokens = p.tokens ?? prev?.tokens;
    if (usd === undefined && tokens === undefined) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `Pane ${s.id} has no budget to raise: give "usd" or "tokens"`,
      );
    }
    if (usd !== undefined) b.usd = Math.round(usd * 1e6) / 1e6;
    if (tokens !== undefined) b.tokens = tokens;
    const spent = this.#spent(target, b);
    b.warned = spent.ratio >= 0.8;
    b.exceeded = spent.ratio >= 1;
    budgets[target] = b;
    this.#scheduleSave();
    return {
      target: this.#targetName(target),
      usd: b.usd ?? null,
      tokens: b.tokens ?? null,
      per,
      hard: b.hard,
      spent_usd: spent.usd,
      spent_tokens: spent.tokens,
      over: spent.ratio >= 1,
    };
  }

  #scheduleSave(): void {
    if (!this._host.file || this.#saveTimer) return;
    this.#saveTimer = setTimeout(() => {
      this.#saveTimer = null;
      void this.save();
    }, SAVE_MS);
  }

  /** Writes the state file (a temp file renamed over it: a crash leaves the old one whole). */
  async save(): Promise<void> {
    const file = this._host.file;
    if (!file || (Object.keys(this.#data.sources).length === 0 && !this.#data.budgets)) return;
    try {
      await Deno.mkdir(file.slice(0, file.lastIndexOf("/")), { recursive: true, mode: 0o700 });
      const tmp = `${file}.${Deno.pid}.tmp`;
      await Deno.writeTextFile(tmp, JSON.stringify(this.#data), { mode: 0o600 });
      await Deno.rename(tmp, file);
    } catch (e) {
      this._host.log(`usage: cannot write ${file}: ${(e as Error).message}`);
    }
  }

  /** Waits for reads in flight, writes the state file and stops the timers. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    for (const timers of this.#later.values()) for (const t of timers) clearTimeout(t);
    this.#later.clear();
    await Promise.all([...this.#reading.values()]);
    for (const w of this.#changed.values()) if (w.timer) clearTimeout(w.timer);
    this.#changed.clear();
    if (this.#saveTimer) clearTimeout(this.#saveTimer);
    this.#saveTimer = null;
    await this.save();
  }
}

/** The state file for the host on `socketPath`: `$XDG_STATE_HOME/paneflow/<socket>-<hash>/usage.json`. */
export async function stateFile(socketPath: string, dir?: string): Promise<string> {
  if (dir) return `${dir}/usage.json`;
  const base = Deno.env.get("XDG_STATE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.local/state`;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(socketPath)));
  const hash = [...digest.slice(0, 4)].map((b) => b.toString(16).padStart(2, "0")).join("");
  const name = socketPath.slice(socketPath.lastIndexOf("/") + 1).replace(/[^A-Za-z0-9._-]/g, "_");
  return `${base}/paneflow/${name}-${hash}/usage.json`;
}
