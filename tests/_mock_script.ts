/**
 * The directive language the Codex and Gemini mocks share (docs/agents.md,
 * Tests): the reply to a turn is scripted by the
 * prompt the test typed, so a test drives the real agent with nothing but
 * `paneflow send --submit`.
 *
 * - `ECHO <text>`: reply `<text>` in one chunk.
 * - `CHUNKS <n> <text>`: reply `<text>` streamed in `n` chunks.
 * - `RUN <cmd>`: a shell tool call (Gemini asks before running it; Codex runs
 *   it in its sandbox). `RUN! <cmd>`: Codex asks for an unsandboxed run, which
 *   opens its approval dialog. After the tool result the reply is `DONE: <output>`.
 * - `TOOL <name part> <json args>`: calls the first offered tool whose name
 *   contains `<name part>` (an MCP tool, e.g. `list_panes`); then `DONE: <output>`.
 * - `SLOW <ms> <directive>`: the first byte after `ms`.
 * - `HOLD <text>`: starts the reply and sends nothing more until the client
 *   goes away (an interrupt) or the mock is released.
 * - `FAIL <status>`: an HTTP error with the API's error body, `mock failure <status>`.
 * - anything else: `MOCK-REPLY-<n>`.
 *
 * @module
 */

/** What a prompt asks the mock for. */
export type Directive =
  | { kind: "text"; text: string; chunks: number; delayMs: number }
  | { kind: "run"; command: string; escalate: boolean; delayMs: number }
  | { kind: "tool"; name: string; args: Record<string, unknown>; delayMs: number }
  | { kind: "hold"; text: string }
  | { kind: "fail"; status: number };

/** Parses the newest prompt of a turn; `n` numbers the default reply. */
export function parseDirective(prompt: string, n: number): Directive {
  let p = prompt.trim();
  let delayMs = 0;
  const slow = /^SLOW (\d+)\s+([\s\S]*)$/.exec(p);
  if (slow) {
    delayMs = Number(slow[1]);
    p = slow[2];
  }
  let m: RegExpExecArray | null;
  if ((m = /^ECHO ([\s\S]+)$/.exec(p))) return { kind: "text", text: m[1], chunks: 1, delayMs };
  if ((m = /^CHUNKS (\d+) ([\s\S]+)$/.exec(p))) {
    return { kind: "text", text: m[2], chunks: Math.max(1, Number(m[1])), delayMs };
  }
  if ((m = /^RUN(!?) ([\s\S]+)$/.exec(p))) {
    return { kind: "run", command: m[2], escalate: m[1] === "!", delayMs };
  }
  if ((m = /^TOOL (\S+)\s*([\s\S]*)$/.exec(p))) {
    let args: Record<string, unknown> = {};
    try {
      args = m[2].trim() ? JSON.parse(m[2]) : {};
    } catch { /* no args */ }
    return { kind: "tool", name: m[1], args, delayMs };
  }
  if ((m = /^HOLD\s*([\s\S]*)$/.exec(p))) return { kind: "hold", text: m[1] };
  if ((m = /^FAIL (\d{3})/.exec(p))) return { kind: "fail", status: Number(m[1]) };
  return { kind: "text", text: `MOCK-REPLY-${n}`, chunks: 1, delayMs };
}

/** The reply after a tool result: `DONE: ` and the output on one line (at most 400 chars). */
export function doneText(output: string): string {
  const squashed = output.replace(/<\/?untrusted_context>/g, "").replace(/\s+/g, " ").trim();
  return `DONE: ${squashed.slice(0, 400) || "(no output)"}`;
}

/** Splits text into `parts` pieces of about equal size. */
export function splitEvenly(text: string, parts: number): string[] {
  const n = Math.max(1, Math.min(parts, text.length || 1));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

/** A promise that settles after `ms`, or at once when `signal` aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (ms <= 0 || signal?.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(t);
      resolve();
    }, { once: true });
  });
}

/** The state a hold waits on: released by the test or by the client going away. */
export class Holds {
  #waiting = new Set<() => void>();
  /** Waits until {@link release} or `signal` aborts. */
  wait(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        this.#waiting.delete(done);
        resolve();
      };
      this.#waiting.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
  /** How many replies are held now. */
  get count(): number {
    return this.#waiting.size;
  }
  /** Lets every held reply finish. */
  release(): void {
    for (const f of [...this.#waiting]) f();
  }
}
