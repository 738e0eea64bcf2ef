/**
 * Surface (pane) methods: list, read, search, rename, focus, status, close, send, answer, split.
 *
 * @module
 */
import { ErrorCode, ErrorReason, MAX_SEND_BYTES } from "../../spec/codes.ts";
import { RpcError } from "../../errors.ts";
import type { HostContext } from "../context.ts";
import { fence } from "../../agents/fence.ts";
import { keyBytes } from "../../core/pane/keys.ts";
import type { Surface } from "../../core/registry.ts";
import { answerDialog } from "../../agents/answer.ts";
import { bracketedPaste, LARGE_PROMPT_BYTES, submitDelayMs, submitToAgent } from "../../agents/submit.ts";
import { dirname } from "../../paths.ts";
import { prefillPrompt, splitWithWorktree } from "../../up/apply.ts";
import { promptFiles } from "../../agents/prompt_files.ts";
import type { FamilyHandlers } from "./_types.ts";
import { screenHandler } from "../../core/pane/screen_state.ts";
import { refusedHookFrames } from "../../core/isolation/hook_token.ts";
import { paneioHandlers } from "../../paneio/methods.ts";

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function live(s: Surface): Surface {
  if (s.exit) {
    throw new RpcError(
      ErrorCode.InvalidParams,
      `Pane ${s.id} has exited (exit code ${s.exit.exit_code}); it can be read but not written`,
      { reason: ErrorReason.Exited },
    );
  }
  return s;
}

/** Writes a large prompt next to the socket so the agent can read it by reference. */
async function writePromptFile(ctx: HostContext, id: number, text: string): Promise<string> {
  const dir = `${dirname(ctx.socketPath)}/prompts`;
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const path = `${dir}/surface-${id}-${Date.now()}.md`;
  await Deno.writeTextFile(path, text, { mode: 0o600 });
  promptFiles.add(id, path); // deleted with the pane, or at host stop
  return path;
}

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
  "surface.explain": async ({ registry, agents }, p) => {
    const s = registry.surface(p.surface_id);
    await agents.detectUntracked([s], true);
    return { ...await agents.explain(s), refused_hook_frames: refusedHookFrames(s) };
  },
  "surface.close": async ({ registry }, p) => {
    const s = registry.surface(p.surface_id);
    await registry.closeSurface(s);
    return { closed: s.id };
  },
  "surface.send_text": async (ctx, p) => {
    const s = live(ctx.registry.surface(p.surface_id));
    const bytes = new TextEncoder().encode(p.text).length;
    if (bytes > MAX_SEND_BYTES) {
      throw new RpcError(
        ErrorCode.InvalidParams,
        `"text": payload is ${bytes} bytes; the limit is ${MAX_SEND_BYTES}`,
      );
    }
    let bracketed = false;
    if (p.submit || p.paste) {
      const modes = await ctx.pool.modes(s.id);
      bracketed = modes.bracketed_paste;
    }
    // An agent started moments ago may not have been scanned yet.
    if (p.submit) await ctx.agents.detectUntracked([s]);
    if (p.submit && ctx.agents.toolOf(s.id)) {
      let text = p.text;
      let viaFile: string | null = null;
      if (bytes > LARGE_PROMPT_BYTES) {
        viaFile = await writePromptFile(ctx, s.id, p.text);
        text = `Read the file ${viaFile} and follow the instructions in it.`;
      }
      const r = await submitToAgent({
        pool: ctx.pool,
        agents: ctx.agents,
        id: s.id,
        text,
        bracketed,
        delayMs: submitDelayMs(ctx.config.submit_paste_delay_ms, bytes),
      });
      return {
        surface_id: s.id,
        bytes,
        bracketed,
        submitted: r.status === "submitted" || r.status === "queued",
        ...r,
        via_file: viaFile,
      };
    }
    const payload = bracketed ? bracketedPaste(p.text) : p.text;
    if (payload) await ctx.pool.write(s.id, payload);
    if (p.submit) {
      await sleep(submitDelayMs(ctx.config.submit_paste_delay_ms, bytes));
      await ctx.pool.write(live(s).id, "\r");
    }
    return { surface_id: s.id, bytes, bracketed, submitted: p.submit ?? false };
  },
  "surface.send_keystroke": async (ctx, p) => {
    // A bad key name is the caller's mistake whatever state the pane is in: checked first.
    const named = keyBytes(p.keystroke);
    if ("error" in named) throw new RpcError(ErrorCode.InvalidParams, `"keystroke": ${named.error}`);
    const s = live(ctx.registry.surface(p.surface_id));
    const modes = await ctx.pool.modes(s.id);
    const key = keyBytes(p.keystroke, { applicationCursor: modes.application_cursor });
    await ctx.pool.write(s.id, "bytes" in key ? key.bytes : named.bytes);
    ctx.agents.noteKey(s.id, p.keystroke);
    return { surface_id: s.id, keystroke: p.keystroke };
  },
  "surface.answer": async (ctx, p) => {
    const s = live(ctx.registry.surface(p.surface_id));
    await ctx.agents.detectUntracked([s], true);
    return await answerDialog({
      pool: ctx.pool,
      agents: ctx.agents,
      id: s.id,
      generation: () => s.generation,
      answer: p.answer,
      dialogId: p.dialog_id,
    });
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
