/**
 * ptywright's `session.*` family (docs/ptywright.md): sessions are panes run by the
 * pane workers (src/session/); reads are redacted by default.
 *
 * @module
 */
import { PwLimits } from "../../spec/ptywright.ts";
import { parseMatcher } from "../../core/session/matcher.ts";
import { hasLua } from "../../plugins/matcher.ts";
import type { ScreenSnapshot } from "../../core/session/worker_api.ts";
import { mayRedact, type Policy, policyOf, redact } from "../../session/redact.ts";
import { textsOfEncoded } from "../../core/session/snapshot.ts";
import { type PwHandlers, sessionsOf } from "./_ptywright.ts";

type SessionMethod =
  | "session.create"
  | "session.list"
  | "session.close"
  | "session.kill"
  | "session.resize"
  | "session.input"
  | "session.snapshot"
  | "session.transcript"
  | "session.wait";

/**
 * Redacts a snapshot: plain text, title, and each row of cells whose text
 * changes (the row is refilled one character per cell, cut at the width).
 */
export function redactSnapshot(snap: ScreenSnapshot, policy: Policy | null): ScreenSnapshot {
  if (!policy) return snap;
  const cols = snap.size.cols;
  const cells = snap.cells.slice();
  for (let row = 0; row * cols < cells.length; row++) {
    const part = cells.slice(row * cols, (row + 1) * cols);
    const text = part.map((c) => (c.wide_continuation ? "" : c.text || " ")).join("").replace(/ +$/, "");
    const clean = redact(text, policy);
    if (clean === text) continue;
    const chars = [...clean];
    part.forEach((c, i) => {
      cells[row * cols + i] = {
        ...c,
        text: chars[i] === undefined || chars[i] === " " ? "" : chars[i],
        wide: false,
        wide_continuation: false,
      };
    });
  }
  return {
    ...snap,
    plain_text: redact(snap.plain_text, policy),
    title: snap.title === null ? null : redact(snap.title, policy),
    cells,
  };
}

export const sessionMethods: PwHandlers<SessionMethod> = {
  "session.create": async (ctx, p) => ({ session: (await sessionsOf(ctx).create(p)).id }),
  // As ptywright: adapter-owned sessions are listed by adapter.live, not here.
  "session.list": (ctx) => ({
    sessions: sessionsOf(ctx).all().filter((s) => !s.adapter).map((s) => s.id).sort(),
  }),
  "session.close": async (ctx, p) => {
    await sessionsOf(ctx).close(p.session);
    return { closed: true };
  },
  "session.kill": async (ctx, p) => {
    await sessionsOf(ctx).kill(p.session);
    return { killed: true };
  },
  "session.resize": async (ctx, p) => {
    await sessionsOf(ctx).resize(p.session, p.rows, p.cols, p);
    return { resized: true };
  },
  "session.input": async (ctx, p) => {
    await sessionsOf(ctx).input(p.session, p.action);
    return { sent: true };
  },
  "session.snapshot": async (ctx, p) => {
    // The policy is checked before the session, as ptywright does.
    const policy = policyOf(p.redact, p.redaction);
    const raw = await sessionsOf(ctx).snapshotRaw(p.session);
    if (!policy) return raw;
    // Most screens hold nothing to redact: then the worker's JSON goes out as it is (parsing,
    // redacting and writing again the ~2,000 cells cost ~6 ms of the main thread).
    const { plain_text, title } = textsOfEncoded(raw.text);
    if (!mayRedact(plain_text, policy) && (title === null || !mayRedact(title, policy))) return raw;
    return redactSnapshot(JSON.parse(raw.text), policy);
  },
  "session.transcript": async (ctx, p) => {
    const policy = policyOf(p.redact, p.redaction);
    return { text: redact(await sessionsOf(ctx).transcript(p.session), policy) };
  },
  "session.wait": async (ctx, p, conn) => {
    // A `lua` predicate runs in the plugin registry, on the main thread (src/plugins/).
    if (hasLua(p.matcher)) {
      const abort = new AbortController();
      const off = conn.onClose(() => abort.abort());
      try {
        return await ctx.plugins.adapters.waitSession(
          p.session,
          p.matcher,
          p.timeout_ms ?? PwLimits.waitTimeoutMs,
          abort.signal,
        );
      } finally {
        off();
      }
    }
    const matcher = parseMatcher(p.matcher);
    const sessions = sessionsOf(ctx);
    sessions.get(p.session);
    // A connection that goes away cancels its waits.
    const abort = new AbortController();
    const off = conn.onClose(() => abort.abort());
    try {
      // Not redacted (as ptywright): the worker's JSON goes out as it is.
      return await sessions.waitRaw(p.session, matcher, p.timeout_ms ?? PwLimits.waitTimeoutMs, abort.signal);
    } finally {
      off();
    }
  },
};
