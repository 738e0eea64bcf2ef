/**
 * Notifications (docs/notify.md): a subscriber of the host's bus that turns
 * agent states and pane exits into notifications by the config's rules,
 * hands them to each sink's queue (./delivery.ts: off the host's path), and
 * reports each outcome as a `notification_sent` / `notification_failed`
 * event. Notifications that expect an answer carry signed reply links
 * (./links.ts) to `paneflow web`, which come back as `notify.reply`: the same
 * paths as `paneflow answer` (a stale dialog is refused), `send --submit` and
 * an interrupt key, recorded as a `remote_reply` event.
 *
 * @module
 */
import type { BusEvent, EventBus, Subscription } from "../core/bus.ts";
import type { Registry, Surface } from "../core/registry.ts";
import type { AgentTracker } from "../agents/tracker.ts";
import { type Typist, writable } from "../typing/mod.ts";
import { RpcError } from "../errors.ts";
import { ErrorCode } from "../spec/codes.ts";
import type { NotifyConfig, NotifyWhen, ReplyAction } from "../spec/notify.ts";
import { type NotifyBody, paneText } from "./body.ts";
import { SinkQueue, type SinkStats } from "./delivery.ts";
import { LinkRefused, LinkSigner } from "./links.ts";
import { type PaneFacts, RuleState } from "./rules.ts";

/** What notifications need of the host. */
export interface NotifyHost {
  bus: EventBus;
  registry: Registry;
  agents: AgentTracker;
  /** Every write into a pane: a one-line answer is `send --submit`'s, an interrupt `key`'s. */
  typing: Typist;
  config: NotifyConfig;
  log: (line: string) => void;
}

/**
 * How long a "waiting" without a dialog on screen yet waits for one to be drawn (Claude Code's
 * Notification hook can come before its dialog), so the links can approve it.
 */
const DIALOG_WAIT_MS = 600;

const TYPES = new Set(["agent_state", "ai.exit", "surface_exited", "surface_closed"]);

/** The reply links a notification of `when` offers. */
function actionsFor(when: NotifyWhen | "test", dialog: boolean): ReplyAction[] {
  if (when === "waiting_for_input") {
    return dialog ? ["approve", "deny", "interrupt"] : ["answer", "interrupt"];
  }
  if (when === "stalled") return ["interrupt"];
  if (when === "finished" || when === "errored") return ["answer"];
  return [];
}

/** The notification service. */
export class NotifyService {
  #sub: Subscription | null = null;
  #queues = new Map<string, SinkQueue>();
  #rules = new RuleState();
  #signer = new LinkSigner();
  #publicUrl: string | null;
  #hostname = Deno.hostname();

  constructor(private readonly _host: NotifyHost) {
    this.#publicUrl = _host.config.public_url ?? null;
    for (const [name, sink] of Object.entries(_host.config.sinks)) {
      this.#queues.set(name, new SinkQueue(name, sink, _host.log));
    }
  }

  /** Subscribes to the bus when any rule exists. */
  start(): void {
    if (!this._host.config.rules.length) return;
    this.#sub = this._host.bus.subscribe({ types: TYPES });
    void this.#loop(this.#sub);
  }

  /** Unsubscribes and stops every sink's queue. */
  dispose(): void {
    this.#sub?.close();
    for (const q of this.#queues.values()) q.close();
  }

  /** Where reply links point (`paneflow web --public-url` sets it). */
  setPublicUrl(url: string, explicit: boolean): { public_url: string | null } {
    if (explicit || !this._host.config.public_url) this.#publicUrl = url.replace(/\/+$/, "");
    return { public_url: this.#publicUrl };
  }

  async #loop(sub: Subscription) {
    while (true) {
      const ev = await sub.next();
      if (ev === null) return;
      if (!ev) continue;
      try {
        await this.#onEvent(ev);
      } catch (e) {
        this._host.log(`notify: ${ev.type}: ${(e as Error).message}`);
      }
    }
  }

  async #onEvent(ev: BusEvent) {
    const id = ev.surface_id;
    if (id === undefined) return;
    if (ev.type === "surface_closed") return this.#rules.forget(id);
    const s = this._host.registry.surfaces.get(id);
    if (!s) return;
    const now = Date.now();
    let hit: { when: NotifyWhen; turnMs: number | null } | null = null;
    if (ev.type === "agent_state") {
      hit = this.#rules.onState(id, String(ev.state), (ev.previous_state as string | null) ?? null, now);
    } else if (ev.type === "ai.exit" && ev.state === "errored") {
      hit = { when: "errored", turnMs: null };
    } else if (ev.type === "surface_exited" && ev.exit_code !== 0) {
      hit = { when: "exited_nonzero", turnMs: null };
    }
    if (!hit) return;
    const facts: PaneFacts = {
      id,
      name: s.name,
      workspace: s.workspace.title,
      tool: this._host.agents.toolOf(id) ?? null,
    };
    const fired = this.#rules.fire(this._host.config.rules, facts, hit, now);
    if (!fired.length) return;
    const body = await this.#body(s, ev, hit);
    const sinks = new Set(fired.flatMap((i) => this._host.config.rules[i].to));
    for (const name of sinks) {
      this.#send(
        name,
        body,
        fired.find((i) => this._host.config.rules[i].to.includes(name))!,
      );
    }
  }

  async #body(
    s: Surface,
    ev: BusEvent,
    hit: { when: NotifyWhen; turnMs: number | null },
  ): Promise<NotifyBody> {
    const status = this._host.agents.status(s);
    let dialogId = (ev.dialog_id as string | null | undefined) ?? status.dialog_id ?? null;
    // A hook can say "waiting" before the agent draws its dialog: look at the screen a moment.
    if (dialogId === null && hit.when === "waiting_for_input") dialogId = await this.#dialogSoon(s.id);
    const replies: NotifyBody["replies"] = {};
    if (this.#publicUrl) {
      for (const action of actionsFor(hit.when, dialogId !== null)) {
        const token = await this.#signer.sign(
          {
            surface_id: s.id,
            action,
            dialog_id: action === "approve" || action === "deny" ? dialogId : null,
          },
          this._host.config.link_ttl_secs * 1000,
        );
        replies[action] = `${this.#publicUrl}/r/${token}`;
      }
    }
    const waiting = hit.when === "waiting_for_input" || hit.when === "errored";
    return {
      event: hit.when,
      host: this.#hostname,
      workspace: { index: this._host.registry.indexOf(s.workspace), title: s.workspace.title },
      pane: { id: s.id, name: s.name },
      agent: status.tool,
      state: String(ev.state ?? status.state),
      command: waiting ? paneText((ev.message as string | null) ?? status.message) : null,
      result: hit.when === "finished" || hit.when === "errored"
        ? paneText((ev.last_result as string | null) ?? status.last_result)
        : null,
      exit_code: typeof ev.exit_code === "number" ? ev.exit_code : null,
      turn_secs: hit.turnMs === null ? null : hit.turnMs / 1000,
      dialog_id: dialogId,
      untrusted: ["command", "result"],
      time: new Date().toISOString(),
      replies,
    };
  }

  /** The dialog the pane shows within {@link DIALOG_WAIT_MS}, or null (a question, not a dialog). */
  async #dialogSoon(id: number): Promise<string | null> {
    const end = Date.now() + DIALOG_WAIT_MS;
    while (true) {
      const shown = (await this._host.agents.screenNow(id).catch(() => null))?.verdict?.dialog?.id ?? null;
      if (shown !== null || Date.now() >= end || this._host.agents.stateOf(id) !== "waiting_for_input") {
        return shown;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  #send(
    name: string,
    body: NotifyBody,
    rule: number | null,
    done?: (ok: boolean, error: string | null, attempts: number) => void,
  ) {
    const q = this.#queues.get(name);
    if (!q) return done?.(false, `no sink named "${name}"`, 0);
    q.push({
      body,
      done: (o) => {
        const base = {
          ...(body.pane ? { surface_id: body.pane.id } : {}),
          sink: name,
          sink_type: q.sink.type,
          rule,
          event: body.event,
          attempts: o.attempts,
        };
        this._host.bus.publish(
          o.ok
            ? { type: "notification_sent", ...base }
            : { type: "notification_failed", ...base, error: o.error },
        );
        done?.(o.ok, o.ok ? null : o.error, o.attempts);
      },
    });
  }

  /** `notify.test`: a sample notification to one sink, with its outcome. */
  test(sink: string): Promise<{ sink: string; ok: boolean; error: string | null; attempts: number }> {
    if (!this.#queues.has(sink)) {
      const names = [...this.#queues.keys()].map((n) => `"${n}"`).join(", ");
      throw new RpcError(
        ErrorCode.InvalidParams,
        `No sink named "${sink}" in the config${names ? `; sinks: ${names}` : "; it names no sinks"}`,
      );
    }
    const body: NotifyBody = {
      event: "test",
      host: this.#hostname,
      workspace: null,
      pane: null,
      agent: null,
      state: null,
      command: null,
      result: null,
      exit_code: null,
      turn_secs: null,
      dialog_id: null,
      untrusted: ["command", "result"],
      time: new Date().toISOString(),
      replies: {},
    };
    return new Promise((resolve) => {
      this.#send(sink, body, null, (ok, error, attempts) => resolve({ sink, ok, error, attempts }));
    });
  }

  /** `notify.ls`: the rules, each sink's figures, where links point. */
  list(): {
    rules: NotifyConfig["rules"];
    sinks: ({ name: string; type: string } & SinkStats)[];
    public_url: string | null;
    link_ttl_secs: number;
  } {
    return {
      rules: this._host.config.rules,
      sinks: [...this.#queues.values()].map((q) => ({ name: q.name, type: q.sink.type, ...q.stats })),
      public_url: this.#publicUrl,
      link_ttl_secs: this._host.config.link_ttl_secs,
    };
  }

  /**
   * `notify.reply`: checks the link, does its one action on its one pane and
   * records it (`remote_reply`); the link is spent whether the action worked
   * or was refused (a stale dialog), never when the link itself was refused.
   */
  async reply(p: { token: string; text?: string; origin: string }): Promise<{
    surface_id: number;
    action: ReplyAction;
    ok: true;
    detail: string;
  }> {
    let claim;
    try {
      claim = await this.#signer.check(p.token);
    } catch (e) {
      if (!(e instanceof LinkRefused)) throw e;
      this._host.bus.publish({
        type: "remote_reply",
        action: null,
        origin: p.origin,
        ok: false,
        error: e.message,
      });
      throw new RpcError(ErrorCode.InvalidParams, e.message, { reason: "link_refused" });
    }
    this.#signer.spend(claim);
    const record = (ok: boolean, error: string | null) =>
      this._host.bus.publish({
        type: "remote_reply",
        surface_id: claim.surface_id,
        action: claim.action,
        origin: p.origin,
        ok,
        error,
      });
    try {
      const detail = await this.#act(claim.surface_id, claim.action, claim.dialog_id, p.text);
      record(true, null);
      return { surface_id: claim.surface_id, action: claim.action, ok: true, detail };
    } catch (e) {
      record(false, (e as Error).message);
      throw e;
    }
  }

  async #act(
    id: number,
    action: ReplyAction,
    dialogId: string | null,
    text: string | undefined,
  ): Promise<string> {
    const { registry, agents, typing } = this._host;
    const s = writable(registry.surface(id));
    await agents.detectUntracked([s], true);
    switch (action) {
      case "approve":
      case "deny": {
        const r = await typing.answer(s, action, dialogId ?? undefined);
        return r.closed ? `answered ${action}` : `pressed ${r.keys.join(" ")}; the dialog is still shown`;
      }
      case "answer": {
        if (!text?.trim()) throw new RpcError(ErrorCode.InvalidParams, `"text": an answer cannot be empty`);
        const t = await typing.type(s, { text, as: "paste", submit: true });
        return t.transaction?.status ?? (t.submitted ? "submitted" : "typed");
      }
      case "interrupt": {
        const key = agents.toolOf(id) ? "esc" : "ctrl-c";
        await typing.press(s, key, "keystroke");
        return `pressed ${key}`;
      }
    }
  }
}
