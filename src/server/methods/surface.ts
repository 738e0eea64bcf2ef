/**
 * Surface (pane) methods: list, read, search, rename, focus, status, close, send, answer, split.
 *
 * @module
 */
import { ErrorCode } from "../../spec/codes.ts";
import { RpcError } from "../../errors.ts";
import { fence } from "../../agents/fence.ts";
import { pressed, writable } from "../../typing/mod.ts";
import { prefillPrompt, splitWithWorktree } from "../../up/apply.ts";
import type { FamilyHandlers } from "./_types.ts";
import { screenHandler } from "../../core/pane/screen_state.ts";
import { refusedHookFrames } from "../../core/isolation/hook_token.ts";
import { paneioHandlers } from "../../paneio/methods.ts";

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

/** The `surface.*` handlers. */
export const surface: FamilyHandlers<"surface"> = {
  "surface.list": ({ registry }, p) => {
    // A workspace that does not exist is an error, as everywhere else, not an empty list.
    const ws = p.workspace === undefined ? undefined : registry.workspaceAt(p.workspace);
    return {
      surfaces: [...registry.surfaces.values()]
        .filter((s) => ws === undefined || s.workspace === ws)
        .map((s) => registry.describe(s)),
    };
  },
  "surface.read": async (ctx, p) => {
    const s = ctx.registry.surface(p.surface_id);
    const lines = clamp(p.lines ?? 200, 1, 4000);
    const offset = p.offset ?? 0;
    if (p.since !== undefined && offset) {
      throw new RpcError(ErrorCode.InvalidParams, `"offset": cannot be combined with "since"`);
    }
    const r = await ctx.pool.read(s.id, lines, offset, p.since, p.join_wrapped);
    if (r.out_of_range) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `"offset": ${offset} is out of range; pane ${s.id} holds ${r.total_lines} lines`,
      );
    }
    const text = r.lines.join("\n");
    const base = {
      surface_id: s.id,
      lines: r.lines.length,
      total_lines: r.total_lines,
      eof: r.eof,
      output_generation: r.generation,
    };
    const since = p.since === undefined ? {} : { since: p.since, reset: r.reset };
    if (!(p.fenced ?? ctx.config.ai_injection_fence)) {
      return { ...base, text, fenced: false as const, ...since, ...(r.changed && { changed: r.changed }) };
    }
    // Fenced, the rows' text is in `text` (inside the fence), in this order: here only where they are.
    const changed = r.changed?.map((c) => ({ line: c.line }));
    return { ...base, text: fence(text), fenced: true as const, ...since, ...(changed && { changed }) };
  },
  "surface.screen": (ctx, p) => screenHandler(ctx, p),
  "surface.search": async (ctx, p) => {
    const s = ctx.registry.surface(p.surface_id);
    const max = clamp(p.max_matches ?? 50, 1, 1000);
    const { hits } = await ctx.pool.search(s.id, p.pattern, max);
    const fenced = p.fenced ?? ctx.config.ai_injection_fence;
    const base = { surface_id: s.id, count: hits.length };
    if (!fenced) return { ...base, fenced, matches: hits.map((h) => ({ line: h.line + 1, text: h.text })) };
    // Like surface.read: the pane's text sits inside the fence only; a match outside it is a line number.
    return {
      ...base,
      fenced,
      matches: hits.map((h) => ({ line: h.line + 1 })),
      text: fence(hits.map((h) => `line ${h.line + 1}: ${h.text}`).join("\n")),
    };
  },
  "surface.rename": ({ registry }, p) => {
    const s = registry.surface(p.surface_id);
    registry.rename(s, p.name);
    return registry.describe(s);
  },
  "surface.focus": ({ registry }, p) => {
    const s = registry.surface(p.surface_id);
    registry.focus(s);
    return registry.describe(s);
  },
  "surface.status": async ({ registry, agents }, p) => {
    const s = registry.surface(p.surface_id);
    await agents.detectUntracked([s], true);
    return agents.status(s);
  },
  "surface.explain": async ({ registry, agents, caps }, p) => {
    const s = registry.surface(p.surface_id);
    await agents.detectUntracked([s], true);
    return {
      ...await agents.explain(s),
      refused_hook_frames: refusedHookFrames(s),
      refused_calls: caps.refusedOn(s),
    };
  },
  "surface.close": async ({ registry }, p) => {
    const s = registry.surface(p.surface_id);
    await registry.closeSurface(s);
    return { closed: s.id };
  },
  "surface.respawn": async ({ registry }, p) => {
    const s = await registry.respawn(registry.surface(p.surface_id), p);
    return registry.describe(s);
  },
  "surface.send_text": async (ctx, p) => {
    const s = ctx.registry.surface(p.surface_id);
    // `send` types raw; --paste and --submit paste (bracketed when the program asked for it).
    const t = await ctx.typing.type(s, {
      text: p.text,
      as: p.submit || p.paste ? "paste" : "keys",
      submit: p.submit,
    });
    const sent = { surface_id: s.id, bytes: t.bytes, bracketed: t.bracketed, submitted: t.submitted };
    return t.transaction ? { ...sent, ...t.transaction, via_file: t.via_file } : sent;
  },
  "surface.send_keystroke": async (ctx, p) => {
    // A bad key name is the caller's mistake whatever state the pane is in: checked first.
    const named = pressed(p.keystroke, "keystroke");
    if ("error" in named) throw new RpcError(ErrorCode.InvalidParams, `"keystroke": ${named.error}`);
    const s = writable(ctx.registry.surface(p.surface_id));
    await ctx.typing.press(s, p.keystroke, "keystroke");
    return { surface_id: s.id, keystroke: p.keystroke };
  },
  "surface.answer": async (ctx, p) => {
    const s = ctx.registry.surface(p.surface_id);
    return await ctx.typing.answer(s, p.answer, p.dialog_id);
  },
  "surface.split": async (ctx, p) => {
    const { registry } = ctx;
    if (p.managed_worktree !== undefined) {
      const target = p.surface_id === undefined ? null : registry.surface(p.surface_id);
      const s = await splitWithWorktree(ctx, {
        direction: p.direction,
        target,
        branch: p.managed_worktree,
        cwd: p.cwd,
        command: p.command,
        name: p.name,
        env: p.env,
        prompt: p.prompt,
        caps: p.caps,
      });
      return registry.describe(s);
    }
    const target = p.surface_id === undefined ? null : registry.surface(p.surface_id);
    const ws = target?.workspace ?? registry.workspaceAt();
    const s = await registry.addPane(ws, p, {
      target: target?.id ?? ws.focused,
      direction: p.direction,
    });
    if (p.prompt !== undefined) prefillPrompt(ctx, s, p.prompt);
    return registry.describe(s);
  },
  // PaneIO (src/paneio/): reply by marker, readiness, clearing.
  "surface.ask": paneioHandlers["surface.ask"],
  "surface.is_ready": paneioHandlers["surface.is_ready"],
  "surface.clear": paneioHandlers["surface.clear"],
};
