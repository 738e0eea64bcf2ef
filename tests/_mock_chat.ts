/**
 * A mock OpenAI Chat Completions API for driving Qwen Code and GitHub Copilot
 * CLI offline (docs/agents.md, Tests). `Deno.serve` on 127.0.0.1 (port 0).
 *
 * `POST /v1/chat/completions` streams `chat.completion.chunk` events (text
 * deltas, or one `delta.tool_calls` call with `finish_reason: "tool_calls"`),
 * then `data: [DONE]`. Replies are scripted by the newest user prompt
 * (tests/_mock_script.ts); a request whose last message is a tool result
 * (`role: "tool"`) gets `DONE: <output>`. Copilot CLI prefixes the user's text
 * with `<current_datetime>…</current_datetime>`; that part is not the prompt.
 *
 * @module
 */
import { delay, type Directive, doneText, Holds, parseDirective, splitEvenly } from "./_mock_script.ts";

/** One request the mock received. */
export interface ChatRequest {
  t: number;
  path: string;
  /** `turn`: a new user prompt; `followup`: a tool result; `other`. */
  kind: "turn" | "followup" | "other";
  prompt?: string;
  answered?: string;
  tools?: string[];
}

/** A running mock. */
export interface MockChat {
  /** e.g. `http://127.0.0.1:41234/v1`. */
  baseUrl: string;
  requests: ChatRequest[];
  /** The requests that started a turn (a typed prompt). */
  turns(): ChatRequest[];
  release(): void;
  close(): Promise<void>;
}

const enc = new TextEncoder();
const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" };

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => (c && typeof c === "object" && "text" in c ? String(c.text) : "")).join("");
}

/** The typed prompt: Qwen Code sends it as the last text part, after `<system-reminder>` parts. */
function promptOf(content: unknown): string {
  if (!Array.isArray(content)) return text(content);
  const parts = content.map((c) => text([c])).filter((t) => t && !t.startsWith("<system-reminder>"));
  return parts.at(-1) ?? "";
}

/** Starts the mock. */
export function startMockChat(opts: { debug?: boolean } = {}): Promise<MockChat> {
  const started = Date.now();
  const requests: ChatRequest[] = [];
  const holds = new Holds();
  const debug = opts.debug || Deno.env.get("PANEFLOW_MOCK_DEBUG") === "1";
  let n = 0;
  let ids = 0;

  function stream(
    body: (emit: (delta: Record<string, unknown>, finish?: string) => void) => Promise<void>,
    signal: AbortSignal,
  ): Response {
    const id = `chatcmpl-${++ids}`;
    return new Response(
      new ReadableStream<Uint8Array>({
        async start(c) {
          const emit = (delta: Record<string, unknown>, finish?: string) =>
            c.enqueue(enc.encode(`data: ${
              JSON.stringify({
                id,
                object: "chat.completion.chunk",
                created: Math.floor(Date.now() / 1000),
                model: "mock-model",
                choices: [{ index: 0, delta, finish_reason: finish ?? null }],
              })
            }\n\n`));
          try {
            await body(emit);
            if (signal.aborted) return c.close();
            c.enqueue(enc.encode(`data: ${
              JSON.stringify({
                id,
                object: "chat.completion.chunk",
                created: Math.floor(Date.now() / 1000),
                model: "mock-model",
                choices: [],
                usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
              })
            }\n\ndata: [DONE]\n\n`));
            c.close();
          } catch { /* the client went away */ }
        },
      }),
      { headers: sseHeaders },
    );
  }

  function reply(t: string, chunks: number, before: number, signal: AbortSignal, hold = false): Response {
    return stream(async (emit) => {
      await delay(before, signal);
      emit({ role: "assistant", content: "" });
      if (hold) await holds.wait(signal);
      if (signal.aborted) return;
      for (const piece of splitEvenly(t, chunks)) {
        emit({ content: piece });
        if (chunks > 1) await delay(40, signal);
      }
      emit({}, "stop");
    }, signal);
  }

  function call(name: string, args: Record<string, unknown>, before: number, signal: AbortSignal): Response {
    const k = ++ids;
    return stream(async (emit) => {
      await delay(before, signal);
      emit({
        role: "assistant",
        content: null,
        tool_calls: [{
          index: 0,
          id: `call_${k}`,
          type: "function",
          function: { name, arguments: JSON.stringify(args) },
        }],
      });
      emit({}, "tool_calls");
    }, signal);
  }

  function answer(d: Directive, tools: string[], log: ChatRequest, signal: AbortSignal): Response {
    log.answered = d.kind;
    switch (d.kind) {
      case "fail":
        log.answered = String(d.status);
        return Response.json(
          { error: { message: `mock failure ${d.status}`, type: "invalid_request_error", code: null } },
          { status: d.status },
        );
      case "text":
        return reply(d.text, d.chunks, d.delayMs, signal);
      case "hold":
        return reply(d.text || "released", 1, 0, signal, true);
      case "run": {
        // Qwen Code's shell tool is `run_shell_command`, Copilot CLI's `bash`; both take {command, description}.
        const name = tools.find((t) => t === "run_shell_command" || t === "bash") ?? "bash";
        return call(name, { command: d.command, description: "Mock runs a command" }, d.delayMs, signal);
      }
      case "tool": {
        const name = tools.find((t) => t.includes(d.name)) ?? d.name;
        return call(name, d.args, d.delayMs, signal);
      }
    }
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    let body: Record<string, unknown> | null = null;
    try {
      body = req.method === "POST" ? await req.json() : null;
    } catch { /* not JSON */ }
    const log: ChatRequest = { t: Date.now() - started, path: url.pathname, kind: "other" };
    requests.push(log);
    if (debug) {
      console.error(`[mock-chat] ${req.method} ${url.pathname} ${JSON.stringify(body).slice(0, 300)}`);
    }
    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      return Response.json({ object: "list", data: [{ id: "mock-model", object: "model" }] });
    }
    if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions") || !body) {
      log.answered = "404";
      return Response.json({ error: { message: `mock: no route ${req.method} ${url.pathname}` } }, {
        status: 404,
      });
    }
    const tools = Array.isArray(body.tools)
      ? (body.tools as { function?: { name?: string } }[]).map((t) => t.function?.name ?? "").filter(Boolean)
      : [];
    log.tools = tools;
    const messages = Array.isArray(body.messages) ? body.messages as Record<string, unknown>[] : [];
    const last = messages.at(-1);
    if (last?.role === "tool") {
      log.kind = "followup";
      log.answered = "followup";
      return reply(doneText(text(last.content)), 1, 0, req.signal);
    }
    const user = messages.findLast((m) => m.role === "user");
    log.kind = "turn";
    log.prompt = promptOf(user?.content).replace(/^<current_datetime>[^<]*<\/current_datetime>\s*/, "");
    return answer(parseDirective(log.prompt, ++n), tools, log, req.signal);
  });

  const port = server.addr.port;
  return Promise.resolve({
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    turns: () => requests.filter((r) => r.kind === "turn"),
    release: () => holds.release(),
    close: async () => {
      holds.release();
      await server.shutdown();
    },
  });
}
