/**
 * Reply by marker (PaneIO's get_output / wait_for_response): type a text,
 * wait, driven by the pane's change events, for a row holding the marker
 * that appears after the echo of what was typed, and return the rows in
 * between without the echo and the bare prompt lines.
 *
 * @module
 */
import { ErrorReason } from "../spec/codes.ts";
import { RpcError } from "../errors.ts";
import type { Surface } from "../core/registry.ts";
import type { PaneHost } from "./pane_access.ts";
import { isBarePrompt, type PromptRule } from "../spec/prompts.ts";
import type { Readiness } from "../agents/readiness.ts";
import { fence } from "../agents/fence.ts";

/** ptywright's timeout code (docs/ptywright.md), used by PaneIO's waits too. */
export const TIMEOUT_CODE = -32001;

/** Rows of an agent's pane searched for the echo of the prompt. */
const AGENT_ROWS = 1000;

/** Fallback poll while waiting on events: covers a change no event reports. */
const POLL_MS = 250;

const squash = (t: string) => t.replace(/\s+/g, "");

/** What {@link parseReply} found in the rows since the send. */
export interface ParsedReply {
  /** The marker's row was seen. */
  found: boolean;
  reply: string;
  /** Index of the last row of the echoed text (-1: not seen). */
  echoEnd: number;
  /** The last row with content, for a timeout's message. */
  lastSeen: string;
}

/**
 * Finds the reply in `rows`, the pane's rows from the one the cursor was on
 * when the text was typed. The echo ends on the first row by which the rows
 * so far (whitespace removed, joined) hold the end of the typed text; the
 * marker counts only on a later row, so a marker inside the command is not
 * the end of its output.
 */
export function parseReply(
  rows: string[],
  text: string,
  marker: string,
  rules: readonly PromptRule[],
  { lastEcho = false } = {},
): ParsedReply {
  const lastSeen = [...rows].reverse().find((l) => l.trim() !== "") ?? "";
  const lastLine = [...text.split("\n")].reverse().find((l) => l.trim() !== "") ?? "";
  const tail = squash(lastLine).slice(-60);
  let echoEnd = -1;
  if (tail && lastEcho) {
    // An agent's screen is redrawn, not appended to: its transcript shows the prompt somewhere
    // above the input box; the newest showing is ours.
    const short = tail.slice(-20);
    for (let i = rows.length - 1; i >= 0 && echoEnd < 0; i--) {
      const alone = squash(rows[i]).includes(short);
      // Wrapped over two rows: the pair holds it but neither row alone does.
      const wrapped = i > 0 && !squash(rows[i - 1]).includes(short) &&
        squash(rows[i - 1] + rows[i]).includes(short);
      if (alone || wrapped) echoEnd = i;
    }
  } else if (tail) {
    let acc = "";
    for (let i = 0; i < rows.length; i++) {
      acc += squash(rows[i]);
      if (acc.includes(tail)) {
        echoEnd = i;
        break;
      }
    }
  } else echoEnd = 0;
  if (echoEnd < 0) return { found: false, reply: "", echoEnd, lastSeen };
  let markerRow = -1;
  let before = "";
  for (let i = echoEnd + 1; i < rows.length; i++) {
    const at = rows[i].indexOf(marker);
    if (at >= 0) {
      markerRow = i;
      before = rows[i].slice(0, at);
      break;
    }
    // A marker wrapped across two rows.
    if (i + 1 < rows.length && !rows[i + 1].includes(marker) && (rows[i] + rows[i + 1]).includes(marker)) {
      markerRow = i + 1;
      before = (rows[i] + rows[i + 1]).slice(0, (rows[i] + rows[i + 1]).indexOf(marker));
      rows = [...rows.slice(0, i), "", ...rows.slice(i + 1)];
      break;
    }
  }
  if (markerRow < 0) return { found: false, reply: "", echoEnd, lastSeen };
  const body = rows.slice(echoEnd + 1, markerRow).map((l) => l.trimEnd());
  if (before.trim()) body.push(before.trimEnd());
  const kept = body.filter((l) => !isBarePrompt(l, rules));
  while (kept.length && kept[0].trim() === "") kept.shift();
  while (kept.length && kept.at(-1)!.trim() === "") kept.pop();
  return { found: true, reply: kept.join("\n"), echoEnd, lastSeen };
}

/**
 * Waits until `check` returns a value, re-checking on each of the pane's
 * events (and every {@link POLL_MS} in case none comes); null at the deadline.
 */
export async function waitOnPane<T>(
  host: PaneHost,
  s: Surface,
  deadline: number,
  check: () => Promise<T | null>,
): Promise<T | null> {
  let wake: (() => void) | null = null;
  let dirty = false;
  const stop = host.listen((ev) => {
    if (ev.surface_id !== s.id && ev.type !== "agent_state") return;
    dirty = true;
    wake?.();
  });
  try {
    while (true) {
      dirty = false;
      const v = await check();
      if (v !== null) return v;
      const left = deadline - Date.now();
      if (left <= 0) return null;
      if (!dirty) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(done, Math.min(left, POLL_MS));
          function done() {
            clearTimeout(t);
            wake = null;
            resolve();
          }
          wake = done;
        });
      }
    }
  } finally {
    stop();
  }
}

/** Options of {@link ask}. */
export interface AskOptions {
  text: string;
  marker: string;
  timeoutMs: number;
  submit: boolean;
  /** Fence the reply and the timeout's last line seen as untrusted output (pane text, both). */
  fenced: boolean;
}

/** Types `text` into the pane and returns the reply up to the marker. */
export async function ask(
  host: PaneHost,
  s: Surface,
  o: AskOptions,
): Promise<{ reply: string; elapsed_ms: number }> {
  const started = Date.now();
  const deadline = started + o.timeoutMs;
  // The cursor's row: the prompt the text is typed after (an agent redraws: its newest rows).
  const total = await host.total(s);
  const typed = await host.type(s, o.text, o.submit);
  const agent = typed.agent !== null;
  const from = agent ? Math.max(0, total - AGENT_ROWS) : Math.max(0, total - 1);
  let last: ParsedReply | null = null;
  const got = await waitOnPane(host, s, deadline, async () => {
    if (!host.alive(s)) {
      throw new RpcError(-32602, `Pane ${s.id} exited before the marker "${o.marker}" appeared`, {
        reason: ErrorReason.Exited,
      });
    }
    const rows = await host.rows(s, from);
    // The echo is of what was typed: a large prompt's reference to its file, not the prompt.
    last = parseReply(rows.lines.slice(Math.max(0, from - rows.from)), typed.text, o.marker, host.rules, {
      lastEcho: agent,
    });
    return last.found ? last : null;
  });
  if (!got) {
    const seen = (last as ParsedReply | null)?.lastSeen ?? "";
    const shown = o.fenced ? `\n${fence(seen.slice(0, 200))}` : ` ${JSON.stringify(seen.slice(0, 200))}`;
    throw new RpcError(
      TIMEOUT_CODE,
      `Timed out after ${o.timeoutMs} ms waiting for a line with the marker "${o.marker}" in pane ${s.id}; ` +
        `last seen:${shown}`,
      { reason: ErrorReason.Timeout, last_seen: o.fenced ? fence(seen) : seen },
    );
  }
  return { reply: o.fenced ? fence(got.reply) : got.reply, elapsed_ms: Date.now() - started };
}

/** Waits until the pane is ready or the deadline passes; the last verdict either way. */
export async function waitReady(host: PaneHost, s: Surface, deadline: number): Promise<Readiness> {
  let last = await host.ready(s);
  if (last.ready || Date.now() >= deadline) return last;
  const r = await waitOnPane(host, s, deadline, async () => {
    last = await host.ready(s);
    return last.ready || last.reason === "exited" ? last : null;
  });
  return r ?? last;
}
