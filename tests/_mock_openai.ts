/**
 * A mock OpenAI Responses API for driving the real Codex CLI offline
 * (docs/agents.md, Tests). `Deno.serve` on 127.0.0.1 (port 0).
 *
 * `POST /v1/responses` streams the SSE events Codex 0.169 accepts
 * (response.created → output_item.added → content_part.added →
 * output_text.delta ×N → output_text.done → output_item.done →
 * response.completed), or a `function_call` item for a tool call. Replies are
 * scripted by the newest prompt (tests/_mock_script.ts). The title
 * side-request Codex's TUI sends after each turn (its `text.format` is a JSON
 * schema) gets `{"title":"Mock task title"}` and is not a turn.
 *
 * @module
 */
import { delay, type Directive, doneText, Holds, parseDirective, splitEvenly } from "./_mock_script.ts";

/** One request the mock received. */
export interface OpenAiRequest {
  t: number;
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Record<string, unknown> | null;
  /** `turn`: a new user prompt; `followup`: a tool result; `title`: the title side-request; `other`. */
  kind: "turn" | "followup" | "title" | "other";
  /** The newest user prompt (turns). */
  prompt?: string;
  /** What was answered: a directive kind, `followup`, `title`, or an HTTP status. */
  answered?: string;
  /** Names of the tools offered. */
  tools?: string[];
}

/** A running mock. */
export interface MockOpenAi {
  /** e.g. `http://127.0.0.1:41234/v1` (the provider's base_url). */
  baseUrl: string;
  port: number;
  requests: OpenAiRequest[];
  /** The requests that started a turn (a typed prompt). */
  turns(): OpenAiRequest[];
  /** How many replies are held (`HOLD`) now. */
  holding(): number;
  release(): void;
  close(): Promise<void>;
}

const enc = new TextEncoder();

function sse(data: Record<string, unknown>): Uint8Array {
  return enc.encode(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** A tool the request offered; `namespace` for one inside a `{type: "namespace"}` group (Codex's MCP tools). */
interface OfferedTool {
  name: string;
  namespace?: string;
}

function offeredTools(tools: unknown, namespace?: string): OfferedTool[] {
  const out: OfferedTool[] = [];
  if (!Array.isArray(tools)) return out;
  for (const t of tools) {
    if (!t || typeof t !== "object") continue;
    const o = t as Record<string, unknown>;
    if (o.type === "namespace" && typeof o.name === "string") out.push(...offeredTools(o.tools, o.name));
    else if (typeof o.name === "string") out.push({ name: o.name, ...(namespace ? { namespace } : {}) });
    else if (o.function && typeof o.function === "object") out.push(...offeredTools([o.function], namespace));
  }
  return out;
}

/** A tool's name as the model sees it: `<namespace>__<name>` inside a namespace. */
function qualified(t: OfferedTool): string {
  return t.namespace ? `${t.namespace}__${t.name}` : t.name;
}

function inputText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((c) => (c && typeof c === "object" && "text" in c ? String(c.text) : "")).join("");
}

/** Starts the mock. */
export function startMockOpenAi(opts: { debug?: boolean } = {}): Promise<MockOpenAi> {
  const started = Date.now();
  const requests: OpenAiRequest[] = [];
  const holds = new Holds();
  let n = 0;
  let ids = 0;
  const debug = opts.debug || Deno.env.get("PANEFLOW_MOCK_DEBUG") === "1";

  function textStream(text: string, chunks: number, before: number, signal: AbortSignal, hold = false) {
    return new ReadableStream<Uint8Array>({
      async start(c) {
        const id = `resp_${++ids}`;
        const itemId = `msg_${ids}`;
        try {
          await delay(before, signal);
          c.enqueue(sse({ type: "response.created", response: { id } }));
          c.enqueue(sse({
            type: "response.output_item.added",
            output_index: 0,
            item: { type: "message", role: "assistant", id: itemId, content: [] },
          }));
          c.enqueue(sse({
            type: "response.content_part.added",
            item_id: itemId,
            output_index: 0,
            content_index: 0,
            part: { type: "output_text", text: "" },
          }));
          if (hold) await holds.wait(signal);
          if (signal.aborted) return c.close();
          for (const piece of splitEvenly(text, chunks)) {
            c.enqueue(sse({
              type: "response.output_text.delta",
              item_id: itemId,
              output_index: 0,
              content_index: 0,
              delta: piece,
            }));
            if (chunks > 1) await delay(40, signal);
          }
          c.enqueue(sse({ type: "response.output_text.done", item_id: itemId, text }));
          c.enqueue(sse({
            type: "response.output_item.done",
            output_index: 0,
            item: {
              type: "message",
              role: "assistant",
              id: itemId,
              content: [{ type: "output_text", text, annotations: [] }],
            },
          }));
          c.enqueue(sse(completed(id)));
          c.close();
        } catch { /* the client went away */ }
      },
    });
  }

  function completed(id: string) {
    return {
      type: "response.completed",
      response: {
        id,
        usage: {
          input_tokens: 10,
          input_tokens_details: { cached_tokens: 0 },
          output_tokens: 5,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: 15,
        },
      },
    };
  }

  function callStream(
    name: string,
    args: Record<string, unknown>,
    before: number,
    signal: AbortSignal,
    namespace?: string,
  ) {
    return new ReadableStream<Uint8Array>({
      async start(c) {
        const k = ++ids;
        const item = {
          type: "function_call",
          id: `fc_${k}`,
          call_id: `call_${k}`,
          name,
          // Codex 0.169 offers MCP tools grouped in a namespace and routes a call by `namespace` + `name`.
          ...(namespace ? { namespace } : {}),
          arguments: JSON.stringify(args),
        };
        try {
          await delay(before, signal);
          c.enqueue(sse({ type: "response.created", response: { id: `resp_${k}` } }));
          c.enqueue(sse({ type: "response.output_item.added", output_index: 0, item }));
          // The AI SDK (opencode) takes a call only from a done item with `status: "completed"`.
          c.enqueue(
            sse({
              type: "response.output_item.done",
              output_index: 0,
              item: { ...item, status: "completed" },
            }),
          );
          c.enqueue(sse(completed(`resp_${k}`)));
          c.close();
        } catch { /* gone */ }
      },
    });
  }

  const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" };

  function answer(d: Directive, tools: OfferedTool[], log: OpenAiRequest, signal: AbortSignal): Response {
    log.answered = d.kind;
    switch (d.kind) {
      case "fail":
        log.answered = String(d.status);
        return Response.json(
          { error: { message: `mock failure ${d.status}`, type: "invalid_request_error", code: null } },
          { status: d.status },
        );
      case "text":
        return new Response(textStream(d.text, d.chunks, d.delayMs, signal), { headers: sseHeaders });
      case "hold":
        return new Response(textStream(d.text || "released", 1, 0, signal, true), { headers: sseHeaders });
      case "run": {
        // opencode offers its shell as `bash` ({command, description}); Codex as `exec_command` ({cmd}).
        if (tools.some((t) => t.name === "bash") && !tools.some((t) => t.name === "exec_command")) {
          const args = { command: d.command, description: "Mock runs a shell command" };
          return new Response(callStream("bash", args, d.delayMs, signal), { headers: sseHeaders });
        }
        const args: Record<string, unknown> = { cmd: d.command };
        if (d.escalate) {
          args.sandbox_permissions = "require_escalated";
          args.justification = "Mock asks to run this unsandboxed";
        }
        return new Response(callStream("exec_command", args, d.delayMs, signal), { headers: sseHeaders });
      }
      case "tool": {
        const tool = tools.find((t) => qualified(t).includes(d.name)) ?? { name: d.name };
        return new Response(callStream(tool.name, d.args, d.delayMs, signal, tool.namespace), {
          headers: sseHeaders,
        });
      }
    }
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => (headers[k] = v));
    let body: Record<string, unknown> | null = null;
    try {
      body = req.method === "POST" ? await req.json() : null;
    } catch { /* not JSON */ }
    const log: OpenAiRequest = {
      t: Date.now() - started,
      method: req.method,
      path: url.pathname,
      headers,
      body,
      kind: "other",
    };
    requests.push(log);
    if (debug) {
      console.error(`[mock-openai] ${req.method} ${url.pathname} ${JSON.stringify(body).slice(0, 300)}`);
    }
    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      return Response.json({ object: "list", data: [] });
    }
    if (req.method !== "POST" || !url.pathname.endsWith("/responses") || !body) {
      log.answered = "404";
      return Response.json({ error: { message: `mock: no route ${req.method} ${url.pathname}` } }, {
        status: 404,
      });
    }
    const format = (body.text as { format?: { type?: string } } | undefined)?.format;
    const first = Array.isArray(body.input) ? (body.input as Record<string, unknown>[])[0] : undefined;
    // opencode's title side-request: its own system prompt, no tools.
    const titler = first?.role === "system" &&
      inputText(first.content).startsWith("You are a title generator");
    if (
      format?.type === "json_schema" || (headers["x-codex-turn-metadata"] ?? "").includes("thread_title") ||
      titler
    ) {
      log.kind = "title";
      log.answered = "title";
      const title = titler ? "Mock task title" : JSON.stringify({ title: "Mock task title" });
      return new Response(textStream(title, 1, 0, req.signal), { headers: sseHeaders });
    }
    const tools = offeredTools(body.tools);
    log.tools = tools.map(qualified);
    const input = Array.isArray(body.input) ? body.input as Record<string, unknown>[] : [];
    const last = input.at(-1);
    if (last?.type === "function_call_output" || last?.type === "custom_tool_call_output") {
      log.kind = "followup";
      log.answered = "followup";
      const out = typeof last.output === "string" ? last.output : JSON.stringify(last.output);
      return new Response(textStream(doneText(out), 1, 0, req.signal), { headers: sseHeaders });
    }
    const user = input.findLast((i) =>
      i.role === "user" && !inputText(i.content).startsWith("<environment_context>")
    );
    log.kind = "turn";
    log.prompt = user ? inputText(user.content) : "";
    return answer(parseDirective(log.prompt, ++n), tools, log, req.signal);
  });

  const port = server.addr.port;
  return Promise.resolve({
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    turns: () => requests.filter((r) => r.kind === "turn"),
    holding: () => holds.count,
    release: () => holds.release(),
    close: async () => {
      holds.release();
      await server.shutdown();
    },
  });
}
