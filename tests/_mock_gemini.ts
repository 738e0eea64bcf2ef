/**
 * A mock Gemini API for driving the real Gemini CLI offline
 * (docs/agents.md, Tests). `Deno.serve` on 127.0.0.1 (port 0); use its URL
 * as GOOGLE_GEMINI_BASE_URL.
 *
 * `POST /v1beta/models/<m>:streamGenerateContent?alt=sse` streams
 * `data: {candidates:[…]}` chunks, the last with `finishReason: "STOP"` and
 * usage. Main-loop requests (they offer `functionDeclarations`) are scripted
 * by the newest prompt (tests/_mock_script.ts): a shell call is a
 * `run_shell_command` functionCall. Side requests (no tools) get `OK`, or an
 * instance of their response schema. `:generateContent`, `:countTokens` and
 * `GET /v1beta/models` are answered too.
 *
 * @module
 */
import { delay, type Directive, doneText, Holds, parseDirective, splitEvenly } from "./_mock_script.ts";

/** One request the mock received. */
export interface GeminiRequest {
  t: number;
  method: string;
  path: string;
  body: Record<string, unknown> | null;
  /** `turn`: a new user prompt; `followup`: a function response; `side`: no tools; `other`. */
  kind: "turn" | "followup" | "side" | "other";
  prompt?: string;
  answered?: string;
  tools?: string[];
}

/** A running mock. */
export interface MockGemini {
  /** e.g. `http://127.0.0.1:41234` (GOOGLE_GEMINI_BASE_URL). */
  url: string;
  port: number;
  requests: GeminiRequest[];
  turns(): GeminiRequest[];
  holding(): number;
  release(): void;
  close(): Promise<void>;
}

const enc = new TextEncoder();

/** A JSON value that fits a (simple) JSON schema, for classifier side requests. */
function instanceOf(schema: unknown): unknown {
  const s = (schema ?? {}) as Record<string, unknown>;
  const type = String(s.type ?? "object").toLowerCase();
  if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
  if (type === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries((s.properties ?? {}) as Record<string, unknown>)) {
      out[k] = instanceOf(v);
    }
    return out;
  }
  if (type === "array") return [];
  if (type === "string") return "mock";
  if (type === "number" || type === "integer") return 0;
  if (type === "boolean") return false;
  return null;
}

function chunk(parts: unknown[], last: boolean, id: string): Uint8Array {
  const candidate: Record<string, unknown> = { content: { role: "model", parts }, index: 0 };
  const data: Record<string, unknown> = {
    candidates: [candidate],
    modelVersion: "gemini-2.5-flash",
    responseId: id,
  };
  if (last) {
    candidate.finishReason = "STOP";
    data.usageMetadata = { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 };
  }
  return enc.encode(`data: ${JSON.stringify(data)}\r\n\r\n`);
}

/** Starts the mock. */
export function startMockGemini(opts: { debug?: boolean } = {}): Promise<MockGemini> {
  const started = Date.now();
  const requests: GeminiRequest[] = [];
  const holds = new Holds();
  let n = 0;
  let ids = 0;
  const debug = opts.debug || Deno.env.get("PANEFLOW_MOCK_DEBUG") === "1";
  const sseHeaders = { "content-type": "text/event-stream", "cache-control": "no-cache" };

  function textStream(text: string, chunks: number, before: number, signal: AbortSignal, hold = false) {
    return new ReadableStream<Uint8Array>({
      async start(c) {
        const id = `mock-${++ids}`;
        try {
          await delay(before, signal);
          if (hold) {
            c.enqueue(enc.encode(": hold\r\n\r\n"));
            await holds.wait(signal);
            if (signal.aborted) return c.close();
          }
          const pieces = splitEvenly(text, chunks);
          for (const [i, piece] of pieces.entries()) {
            c.enqueue(chunk([{ text: piece }], i === pieces.length - 1, id));
            if (i < pieces.length - 1) await delay(60, signal);
          }
          c.close();
        } catch { /* the client went away */ }
      },
    });
  }

  function callStream(name: string, args: Record<string, unknown>, before: number, signal: AbortSignal) {
    return new ReadableStream<Uint8Array>({
      async start(c) {
        try {
          await delay(before, signal);
          c.enqueue(chunk([{ functionCall: { name, args } }], true, `mock-${++ids}`));
          c.close();
        } catch { /* gone */ }
      },
    });
  }

  function answer(d: Directive, tools: string[], log: GeminiRequest, signal: AbortSignal): Response {
    log.answered = d.kind;
    switch (d.kind) {
      case "fail": {
        log.answered = String(d.status);
        const status = d.status === 400
          ? "INVALID_ARGUMENT"
          : d.status === 429
          ? "RESOURCE_EXHAUSTED"
          : "INTERNAL";
        return Response.json({ error: { code: d.status, message: `mock failure ${d.status}`, status } }, {
          status: d.status,
        });
      }
      case "text":
        return new Response(textStream(d.text, d.chunks, d.delayMs, signal), { headers: sseHeaders });
      case "hold":
        return new Response(textStream(d.text || "released", 1, 0, signal, true), { headers: sseHeaders });
      case "run":
        return new Response(
          callStream(
            "run_shell_command",
            { command: d.command, description: "Mock runs a command" },
            d.delayMs,
            signal,
          ),
          { headers: sseHeaders },
        );
      case "tool": {
        const name = tools.find((t) => t.includes(d.name)) ?? d.name;
        return new Response(callStream(name, d.args, d.delayMs, signal), { headers: sseHeaders });
      }
    }
  }

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    let body: Record<string, unknown> | null = null;
    try {
      body = req.method === "POST" ? await req.json() : null;
    } catch { /* not JSON */ }
    const log: GeminiRequest = {
      t: Date.now() - started,
      method: req.method,
      path: url.pathname,
      body,
      kind: "other",
    };
    requests.push(log);
    if (debug) {
      console.error(`[mock-gemini] ${req.method} ${url.pathname} ${JSON.stringify(body).slice(0, 300)}`);
    }
    const action = /:(\w+)$/.exec(url.pathname)?.[1] ?? "";
    if (req.method === "GET" && url.pathname.endsWith("/models")) {
      return Response.json({ models: [{ name: "models/gemini-2.5-flash" }] });
    }
    if (action === "countTokens") return Response.json({ totalTokens: 10 });
    if (action === "embedContent") return Response.json({ embedding: { values: [0, 0, 0] } });
    if (!body || (action !== "streamGenerateContent" && action !== "generateContent")) {
      log.answered = "404";
      return Response.json({
        error: { code: 404, message: `mock: no route ${url.pathname}`, status: "NOT_FOUND" },
      }, {
        status: 404,
      });
    }
    const stream = action === "streamGenerateContent";
    const cfg = (body.generationConfig ?? {}) as Record<string, unknown>;
    const tools = ((body.tools ?? []) as { functionDeclarations?: { name: string }[] }[])
      .flatMap((t) => t.functionDeclarations ?? []).map((f) => f.name);
    log.tools = tools;
    const reply = (text: string) =>
      stream ? new Response(textStream(text, 1, 0, req.signal), { headers: sseHeaders }) : Response.json({
        candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      });
    const schema = cfg.responseJsonSchema ?? cfg.responseSchema;
    if (!tools.length) {
      log.kind = "side";
      log.answered = schema ? "schema" : "side";
      return reply(schema ? JSON.stringify(instanceOf(schema)) : "OK");
    }
    const contents = (body.contents ?? []) as { role?: string; parts?: Record<string, unknown>[] }[];
    const last = contents.at(-1);
    const response = last?.parts?.find((p) => p.functionResponse);
    if (response) {
      log.kind = "followup";
      log.answered = "followup";
      const r = (response.functionResponse as { response?: Record<string, unknown> }).response ?? {};
      const out = typeof r.output === "string" ? r.output : JSON.stringify(r);
      return reply(doneText(out));
    }
    log.kind = "turn";
    // The CLI may put context parts before the typed text: the prompt is the last text part.
    const texts = (last?.parts ?? []).map((p) => (typeof p.text === "string" ? p.text.trim() : "")).filter(
      Boolean,
    );
    log.prompt = texts.at(-1) ?? "";
    return answer(parseDirective(log.prompt, ++n), tools, log, req.signal);
  });

  const port = server.addr.port;
  return Promise.resolve({
    url: `http://127.0.0.1:${port}`,
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
