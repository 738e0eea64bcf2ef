/**
 * Which rules an agent or pane event fires: the condition it is (a state
 * reached, a long turn finished, a non-zero exit), the rule's `where`, and
 * its debounce. Pure, apart from the clock passed in.
 *
 * @module
 */
import type { NotifyRule, NotifyWhen } from "../spec/notify.ts";

/** A pane as the rules see it. */
export interface PaneFacts {
  id: number;
  name: string | null;
  workspace: string;
  tool: string | null;
}

/** `*` and `?` globs, whole string. */
export function globMatch(glob: string, text: string): boolean {
  const re = glob.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".");
  return new RegExp(`^${re}$`, "s").test(text);
}

/** Whether a rule's `where` takes the pane. */
export function whereMatches(rule: NotifyRule, pane: PaneFacts): boolean {
  const w = rule.where;
  if (w.pane !== undefined && !globMatch(w.pane, pane.name ?? String(pane.id))) return false;
  if (w.workspace !== undefined && !globMatch(w.workspace, pane.workspace)) return false;
  if (w.tool !== undefined && w.tool !== pane.tool) return false;
  return true;
}

/** Turn starts and debounce marks, per pane. */
export class RuleState {
  #turnStart = new Map<number, number>();
  #last = new Map<string, number>();

  /**
   * Notes an agent state change; returns the condition it is, if any, and
   * the turn's length for `finished`.
   */
  onState(
    id: number,
    state: string,
    previous: string | null,
    now: number,
  ): { when: NotifyWhen; turnMs: number | null } | null {
    if (state === "thinking" && previous !== "thinking" && previous !== "stalled") {
      this.#turnStart.set(id, now);
      return null;
    }
    switch (state) {
      case "finished": {
        const start = this.#turnStart.get(id);
        this.#turnStart.delete(id);
        return { when: "finished", turnMs: start === undefined ? null : now - start };
      }
      case "waiting_for_input":
      case "errored":
      case "stalled":
        return { when: state, turnMs: null };
    }
    return null;
  }

  /** The rules (by index) that fire for `when` on `pane`; marks them for debounce. */
  fire(
    rules: NotifyRule[],
    pane: PaneFacts,
    hit: { when: NotifyWhen; turnMs: number | null },
    now: number,
  ): number[] {
    const out: number[] = [];
    rules.forEach((rule, i) => {
      if (!rule.when.includes(hit.when) || !whereMatches(rule, pane)) return;
      if (hit.when === "finished" && (hit.turnMs === null || hit.turnMs < rule.min_turn_secs * 1000)) return;
      const key = `${i}:${pane.id}:${hit.when}`;
      const last = this.#last.get(key);
      if (last !== undefined && now - last < rule.debounce_secs * 1000) return;
      this.#last.set(key, now);
      out.push(i);
    });
    return out;
  }

  /** Forgets a closed pane. */
  forget(id: number): void {
    this.#turnStart.delete(id);
    for (const key of this.#last.keys()) if (key.split(":")[1] === String(id)) this.#last.delete(key);
  }
}
