/**
 * A mock Anthropic Messages API for driving the real Claude Code offline.
 *
 * `Deno.serve` on 127.0.0.1 (port 0). `POST /v1/messages` streams Server-Sent
 * Events the way the real API does (message_start, content_block_start /
 * content_block_delta / content_block_stop for text and tool_use blocks with
 * input_json_delta, message_delta with stop_reason, message_stop), or answers
 * with one JSON message when the request has no `stream: true`.
 *
 * Requests from Claude Code's main loop (they carry the `Bash` tool) take
 * their replies from a queue the test controls ({@link MockAnthropic.enqueue});
 * side requests (title generation, quota probe, ...) and an empty queue get a
 * short harmless text. A `bash` reply emits a Bash tool_use; the request that
 * brings its tool_result back is answered with the reply's `then` text without
 * touching the queue. Everything received is in {@link MockAnthropic.requests}.
 *
 * What Claude Code 2.1.328 actually asks of it (with the environment from
 * tests/_claude.ts): nothing at start-up; one `POST /v1/messages?beta=true`
 * (`stream: true`, the main loop, with its tools) per prompt and one more per
 * tool result; after an `event: error` in a stream, the same request again with
 * `stream: false`. No count_tokens, model listing, title generation or HEAD
 * request was seen; the mock still answers those (and logs and 404s any other
 * route) in case another version or setting calls them. Claude Code shows
 * streamed text one completed line at a time.
 *
 * @module
 */

/** One scripted answer to a main-loop request. */
export type Reply =
  /** A plain text turn, streamed in `chunks` deltas (default 3). */
  | { kind: "text"; text: string; chunks?: number }
  /**
   * A Bash tool_use (Claude Code asks permission for it in default mode);
   * when the tool_result comes back the follow-up request gets `then`.
   */
  | { kind: "bash"; command: string; description?: string; text?: string; then: string }
  /** Any tool_use (e.g. an MCP tool `mcp__paneflow__read_pane`); the follow-up request gets `then`. */
  | { kind: "tool"; name: string; input: Record<string, unknown>; text?: string; then: string }
  /** Text streamed evenly over `seconds`. */
  | { kind: "slow"; text: string; seconds: number }
  /**
   * Sends message_start (and `text`, if any) and then nothing until
   * {@link MockAnthropic.release} is called or the client goes away; after the
   * release the rest (`after`, default "Done.") streams and the turn ends.
   */
  | { kind: "hold"; text?: string; after?: string }
  /** An HTTP error with the API's error body (e.g. 500 api_error, 529 overloaded_error). */
  | { kind: "error"; status: number; type?: string; message?: string }
  /**
   * HTTP 200, message_start, then an `event: error` in the stream. Claude Code
   * 2.1.328 then repeats the request without streaming (`repeat: true` in the
   * log), and that repeat takes the next queued reply.
   */
  | { kind: "stream_error"; type?: string; message?: string };

/** What one tool_result block in a request held. */
export interface ToolResult {
  tool_use_id: string;
  is_error: boolean;
  content: string;
}

/** One request the mock received. */
export interface LoggedRequest {
  /** Milliseconds since the mock started. */
  t: number;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string>;
  /** The parsed JSON body, the raw text when it is not JSON, or null. */
  body: unknown;
  /**
   * `main`: a main-loop /v1/messages request (has the Bash tool);
   * `side`: any other /v1/messages request; `count_tokens`; `other`: any other route.
   */
  kind: "main" | "side" | "count_tokens" | "other";
  /** Model asked for (messages requests). */
  model?: string;
  /** Whether the request asked for SSE. */
  stream?: boolean;
  /**
   * The newest prompt: the last text block of the last user message that is
   * neither a `<system-reminder>` nor an `[Request interrupted by user]`
   * marker; null when that message only carries tool results. (Claude Code
   * folds a prompt that got no answer, e.g. after an API error or an
   * interrupt, into the next request's user message: see `texts`.)
   */
  prompt?: string | null;
  /** Every text block of the last user message except `<system-reminder>`s. */
  texts?: string[];
  /** tool_result blocks in the last user message. */
  toolResults?: ToolResult[];
  /** What the mock answered: a reply kind, `default`, `followup`, or an HTTP status. */
  answered?: string;
  /** The tool_use id the mock emitted (for a `bash` reply). */
  toolUseId?: string;
  /**
   * The same messages as the main request before it: Claude Code asking again
   * for the same turn (its non-streaming fallback after a stream error, or a
   * retry when CLAUDE_CODE_MAX_RETRIES allows one). Not counted by `prompts()`.
   */
  repeat?: boolean;
}

/** Options for {@link startMockAnthropic}. */
export interface MockOptions {
  /** Text for main requests when the queue is empty (default "OK."). */
  defaultText?: string;
  /** Print each request to stderr (also when PANEFLOW_MOCK_DEBUG=1). */
  debug?: boolean;
}

/** A running mock. */
export interface MockAnthropic {
  /** e.g. `http://127.0.0.1:41234` (use as ANTHROPIC_BASE_URL). */
  url: string;
  port: number;
  /** Every request received, in order. */
  requests: LoggedRequest[];
  /** The usage of every streamed message sent, in order. */
  sent: SentUsage[];
  /** Main-loop requests that carried a new user prompt (not only tool results; no repeats). */
  prompts(): LoggedRequest[];
  /** Queues replies for the next main-loop requests. */
  enqueue(...replies: Reply[]): void;
  /** Replies still queued. */
  pending(): number;
  /** Lets every `hold` reply in flight finish. */
  release(): void;
  /** How many `hold` replies are waiting now. */
  holding(): number;
  /** Stops the server (in-flight streams are cut). */
  close(): Promise<void>;
}

const enc = new TextEncoder();

function sse(event: string, data: unknown): Uint8Array {
  return enc.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

function randomId(prefix: string): string {
  const abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (let i = 0; i < 24; i++) s += abc[Math.floor(Math.random() * abc.length)];
  return `${prefix}_01${s}`;
}

function splitEvenly(text: string, parts: number): string[] {
  const n = Math.max(1, Math.min(parts, text.length || 1));
  const size = Math.ceil(text.length / n);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out.length ? out : [""];
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b) => (b && typeof b === "object" && "text" in b ? String(b.text) : "")).join("");
}

function lastUserMessage(body: Record<string, unknown>): unknown[] | null {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role === "user") {
      return typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content;
    }
  }
  return null;
}

function describeUserTurn(
  body: Record<string, unknown>,
): Pick<LoggedRequest, "prompt" | "texts" | "toolResults"> {
  const blocks = lastUserMessage(body) ?? [];
  const toolResults: ToolResult[] = [];
  const texts: string[] = [];
  for (const b of blocks as Record<string, unknown>[]) {
    if (b?.type === "tool_result") {
      toolResults.push({
        tool_use_id: String(b.tool_use_id),
        is_error: b.is_error === true,
        content: contentText(b.content),
      });
    } else if (b?.type === "text") {
      const t = String(b.text);
      if (!t.trimStart().startsWith("<system-reminder>")) texts.push(t.replace(/\n$/, ""));
    }
  }
  const typed = texts.filter((t) => !/^\[Request interrupted by user/.test(t));
  return { prompt: typed.length ? typed[typed.length - 1] : null, texts, toolResults };
}

function isMainLoop(body: Record<string, unknown>): boolean {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  return tools.some((t) => t?.name === "Bash");
}

/** Writes the content events of one streamed message; returns its stop_reason. */
type Producer = (w: StreamWriter, signal: AbortSignal) => Promise<string>;

/** Emits SSE content events with running block indexes. */
class StreamWriter {
  #send: (event: string, data: unknown) => void;
  index = -1;
  outputTokens = 1;
  constructor(send: (event: string, data: unknown) => void) {
    this.#send = send;
  }
  /** A whole text block, in `pieces` deltas. */
  text(text: string, pieces = 3): void {
    this.startText();
    for (const p of splitEvenly(text, pieces)) this.textDelta(p);
    this.stop();
  }
  startText(): void {
    this.index++;
    this.#send("content_block_start", {
      type: "content_block_start",
      index: this.index,
      content_block: { type: "text", text: "" },
    });
    if (this.index === 0) this.#send("ping", { type: "ping" });
  }
  textDelta(text: string): void {
    this.outputTokens++;
    this.#send("content_block_delta", {
      type: "content_block_delta",
      index: this.index,
      delta: { type: "text_delta", text },
    });
  }
  /** A whole tool_use block; its input streams as input_json_delta pieces. */
  toolUse(id: string, name: string, input: Record<string, unknown>, pieces = 3): void {
    this.index++;
    this.#send("content_block_start", {
      type: "content_block_start",
      index: this.index,
      content_block: { type: "tool_use", id, name, input: {} },
    });
    if (this.index === 0) this.#send("ping", { type: "ping" });
    for (const p of splitEvenly(JSON.stringify(input), pieces)) {
      this.outputTokens++;
      this.#send("content_block_delta", {
        type: "content_block_delta",
        index: this.index,
        delta: { type: "input_json_delta", partial_json: p },
      });
    }
    this.stop();
  }
  stop(): void {
    this.#send("content_block_stop", { type: "content_block_stop", index: this.index });
  }
  /** An `event: error` in the stream (the API's overloaded_error mid-stream). */
  error(type: string, message: string): void {
    this.#send("error", { type: "error", error: { type, message } });
  }
}

function usage(input: number, output: number) {
  return {
    input_tokens: input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: output,
    service_tier: "standard",
  };
}

/** The usage a streamed message reported (its message_start's input, message_delta's output). */
export type SentUsage = ReturnType<typeof usage> & { id: string; model: string };

interface StreamHooks {
  onError: (e: unknown) => void;
  onUsage: (u: SentUsage) => void;
}

/** A streamed message: message_start, the producer's blocks, message_delta, message_stop. */
function streamResponse(model: string, produce: Producer, hooks: StreamHooks): Response {
  const id = randomId("msg");
  const cancel = new AbortController();
  const body = new ReadableStream<Uint8Array>({
    async start(ctl) {
      const send = (event: string, data: unknown) => {
        if (!cancel.signal.aborted) ctl.enqueue(sse(event, data));
      };
      try {
        send("message_start", {
          type: "message_start",
          message: {
            id,
            type: "message",
            role: "assistant",
            model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: usage(25, 1),
          },
        });
        const w = new StreamWriter(send);
        const stopReason = await produce(w, cancel.signal);
        if (stopReason !== "error") {
          send("message_delta", {
            type: "message_delta",
            delta: { stop_reason: stopReason, stop_sequence: null },
            usage: { output_tokens: w.outputTokens },
          });
          hooks.onUsage({ id, model, ...usage(25, w.outputTokens) });
          send("message_stop", { type: "message_stop" });
        }
        if (!cancel.signal.aborted) ctl.close();
      } catch (e) {
        hooks.onError(e);
        if (!cancel.signal.aborted) ctl.error(e);
      }
    },
    cancel() {
      cancel.abort();
    },
  });
  return new Response(body, {
    headers: {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache",
      "request-id": randomId("req"),
    },
  });
}

/** The same content as one JSON message (for requests without `stream: true`). */
function jsonResponse(model: string, content: unknown[], stopReason: string): Response {
  return Response.json({
    id: randomId("msg"),
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: usage(25, 10),
  }, { headers: { "request-id": randomId("req") } });
}

function errorResponse(status: number, type: string, message: string): Response {
  const requestId = randomId("req");
  return new Response(JSON.stringify({ type: "error", error: { type, message }, request_id: requestId }), {
    status,
    headers: { "content-type": "application/json", "request-id": requestId },
  });
}

function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Starts the mock on 127.0.0.1 with a free port. */
export function startMockAnthropic(opts: MockOptions = {}): Promise<MockAnthropic> {
  const debug = opts.debug ?? Deno.env.get("PANEFLOW_MOCK_DEBUG") === "1";
  const defaultText = opts.defaultText ?? "OK.";
  const started = Date.now();
  const requests: LoggedRequest[] = [];
  const queue: Reply[] = [];
  const followups = new Map<string, string>();
  let lastMainMessages = "";
  const holds = new Set<() => void>();
  const abort = new AbortController();
  const onError = (e: unknown) => {
    if (debug) console.error(`[mock] stream error: ${e}`);
  };
  const sent: SentUsage[] = [];
  const hooks: StreamHooks = { onError, onUsage: (u) => sent.push(u) };

  const log = (entry: LoggedRequest) => {
    requests.push(entry);
    if (debug) {
      const extra = entry.kind === "main" || entry.kind === "side"
        ? ` model=${entry.model} stream=${entry.stream} prompt=${JSON.stringify(entry.prompt)} results=${
          JSON.stringify(entry.toolResults)
        }`
        : "";
      console.error(`[mock +${entry.t}ms] ${entry.method} ${entry.path}${entry.query} ${entry.kind}${extra}`);
    }
  };

  const textReply = (model: string, stream: boolean, text: string) =>
    stream
      ? streamResponse(model, (w) => (w.text(text), Promise.resolve("end_turn")), hooks)
      : jsonResponse(model, [{ type: "text", text }], "end_turn");

  const scripted = (entry: LoggedRequest, model: string, stream: boolean, reply: Reply): Response => {
    switch (reply.kind) {
      case "text":
        return stream
          ? streamResponse(
            model,
            (w) => (w.text(reply.text, reply.chunks), Promise.resolve("end_turn")),
            hooks,
          )
          : jsonResponse(model, [{ type: "text", text: reply.text }], "end_turn");
      case "bash":
      case "tool": {
        const id = randomId("toolu");
        followups.set(id, reply.then);
        const name = reply.kind === "bash" ? "Bash" : reply.name;
        const input = reply.kind === "bash"
          ? { command: reply.command, description: reply.description ?? "Run a shell command" }
          : reply.input;
        entry.toolUseId = id;
        return stream
          ? streamResponse(model, (w) => {
            if (reply.text) w.text(reply.text);
            w.toolUse(id, name, input);
            return Promise.resolve("tool_use");
          }, hooks)
          : jsonResponse(model, [
            ...(reply.text ? [{ type: "text", text: reply.text }] : []),
            { type: "tool_use", id, name, input },
          ], "tool_use");
      }
      case "slow": {
        if (!stream) return jsonResponse(model, [{ type: "text", text: reply.text }], "end_turn");
        const pieces = Math.max(2, Math.round(reply.seconds * 4));
        return streamResponse(model, async (w, signal) => {
          w.startText();
          for (const p of splitEvenly(reply.text, pieces)) {
            await delay((reply.seconds * 1000) / pieces, signal);
            w.textDelta(p);
          }
          w.stop();
          return "end_turn";
        }, hooks);
      }
      case "hold": {
        const after = reply.after ?? "Done.";
        if (!stream) return jsonResponse(model, [{ type: "text", text: after }], "end_turn");
        return streamResponse(model, async (w, signal) => {
          w.startText();
          if (reply.text) w.textDelta(reply.text);
          await new Promise<void>((resolve) => {
            const done = () => {
              holds.delete(done);
              signal.removeEventListener("abort", done);
              resolve();
            };
            holds.add(done);
            signal.addEventListener("abort", done, { once: true });
          });
          w.textDelta((reply.text ? " " : "") + after);
          w.stop();
          return "end_turn";
        }, hooks);
      }
      case "error": {
        const overloaded = reply.status === 529;
        return errorResponse(
          reply.status,
          reply.type ?? (overloaded ? "overloaded_error" : "api_error"),
          reply.message ?? (overloaded ? "Overloaded" : "Internal server error"),
        );
      }
      case "stream_error":
        return streamResponse(model, (w) => {
          w.error(reply.type ?? "overloaded_error", reply.message ?? "Overloaded");
          return Promise.resolve("error");
        }, hooks);
    }
  };

  const messages = (entry: LoggedRequest, body: Record<string, unknown>): Response => {
    const model = String(body.model ?? "claude-sonnet-4-5");
    const stream = body.stream === true;
    if (entry.kind === "main") {
      // Only a request that carries nothing but tool results continues a tool turn. A
      // refused tool's result (is_error) comes back together with the next prompt.
      for (const r of entry.toolResults ?? []) {
        if (entry.prompt != null) {
          followups.delete(r.tool_use_id);
          continue;
        }
        const then = followups.get(r.tool_use_id);
        if (then !== undefined) {
          followups.delete(r.tool_use_id);
          entry.answered = "followup";
          return textReply(model, stream, then);
        }
      }
      const reply = queue.shift();
      if (reply) {
        entry.answered = reply.kind;
        return scripted(entry, model, stream, reply);
      }
    }
    entry.answered = "default";
    return textReply(model, stream, defaultText);
  };

  const handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    const raw = req.method === "GET" || req.method === "HEAD" ? "" : await req.text();
    let body: unknown = raw || null;
    try {
      if (raw) body = JSON.parse(raw);
    } catch { /* keep the text */ }
    const headers: Record<string, string> = {};
    req.headers.forEach((v, k) => {
      headers[k] = /key|auth/i.test(k) ? "<redacted>" : v;
    });
    const entry: LoggedRequest = {
      t: Date.now() - started,
      method: req.method,
      path: url.pathname,
      query: url.search,
      headers,
      body,
      kind: "other",
    };
    const isObj = body !== null && typeof body === "object";
    if (req.method === "POST" && url.pathname === "/v1/messages" && isObj) {
      const b = body as Record<string, unknown>;
      entry.kind = isMainLoop(b) ? "main" : "side";
      if (entry.kind === "main") {
        const key = JSON.stringify(b.messages);
        entry.repeat = key === lastMainMessages;
        lastMainMessages = key;
      }
      entry.model = String(b.model);
      entry.stream = b.stream === true;
      Object.assign(entry, describeUserTurn(b));
      log(entry);
      return messages(entry, b);
    }
    if (req.method === "POST" && url.pathname === "/v1/messages/count_tokens") {
      entry.kind = "count_tokens";
      entry.answered = "200";
      log(entry);
      const size = raw.length;
      return Response.json({ input_tokens: Math.max(1, Math.round(size / 4)) });
    }
    log(entry);
    if (req.method === "HEAD") {
      entry.answered = "200";
      return new Response(null, { status: 200 });
    }
    if (req.method === "GET" && url.pathname === "/v1/models") {
      entry.answered = "200";
      const ids = ["claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"];
      return Response.json({
        data: ids.map((id) => ({
          type: "model",
          id,
          display_name: id,
          created_at: "2025-01-01T00:00:00Z",
        })),
        has_more: false,
        first_id: ids[0],
        last_id: ids[ids.length - 1],
      });
    }
    if (req.method === "GET" && url.pathname.startsWith("/v1/models/")) {
      entry.answered = "200";
      const id = url.pathname.slice("/v1/models/".length);
      return Response.json({ type: "model", id, display_name: id, created_at: "2025-01-01T00:00:00Z" });
    }
    entry.answered = "404";
    return errorResponse(404, "not_found_error", `Not found: ${req.method} ${url.pathname}`);
  };

  return new Promise((resolve) => {
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      signal: abort.signal,
      onListen: () => {},
      onError: (e) => {
        if (debug) console.error(`[mock] handler error: ${e}`);
        return new Response("mock error", { status: 500 });
      },
    }, handler);
    const { port } = server.addr as Deno.NetAddr;
    resolve({
      url: `http://127.0.0.1:${port}`,
      port,
      requests,
      sent,
      prompts: () => requests.filter((r) => r.kind === "main" && r.prompt != null && !r.repeat),
      enqueue: (...replies) => void queue.push(...replies),
      pending: () => queue.length,
      release: () => [...holds].forEach((done) => done()),
      holding: () => holds.size,
      async close() {
        [...holds].forEach((done) => done());
        abort.abort();
        await server.finished.catch(() => {});
      },
    });
  });
}
