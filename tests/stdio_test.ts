/**
 * `serve --stdio`: the protocol on stdin/stdout, one JSON message per line or
 * with LSP `Content-Length` headers; stdout carries only protocol messages;
 * the host is private (its own socket in a fresh temp directory, which panes
 * get) and stops, panes and all, when stdin ends.
 */
import assert from "node:assert/strict";
import { ROOT, runCommand, waitUntil } from "./_harness.ts";

type Message = {
  jsonrpc?: string;
  id?: unknown;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** A `paneflow serve --stdio` child and what it has written to stdout so far. */
interface StdioHost {
  send(bytes: string): Promise<void>;
  /** Resolves with the message answering `id`. */
  answer(id: number): Promise<Message>;
  /** Every message read so far, in order. */
  messages: Message[];
  /** Ends stdin and resolves with the exit code and stderr. */
  end(): Promise<{ code: number; stderr: string }>;
  status: Promise<{ code: number; stderr: string }>;
  /** Raw stdout bytes so far. */
  raw(): Uint8Array;
}

function startStdio(dir: string, framing: "ndjson" | "lsp"): StdioHost {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      `--config=${ROOT}deno.json`,
      `${ROOT}main.ts`,
      "serve",
      "--stdio",
      "--framing",
      framing,
    ],
    env: { PANEFLOW_CONFIG: `${dir}/config.jsonc`, PANEFLOW_IPC_SCRIPTING: "1", TMPDIR: dir },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  const messages: Message[] = [];
  let raw = new Uint8Array(0);
  const parse = () => {
    // Messages are re-parsed from the start: the streams here are small.
    messages.length = 0;
    let rest = raw;
    while (rest.length) {
      let body: Uint8Array;
      if (framing === "ndjson") {
        const nl = rest.indexOf(10);
        if (nl < 0) return;
        body = rest.subarray(0, nl);
        rest = rest.subarray(nl + 1);
      } else {
        const head = new TextDecoder().decode(rest.subarray(0, 64));
        const m = /^Content-Length: (\d+)\r\n\r\n/.exec(head);
        if (!m) return;
        const start = m[0].length;
        if (rest.length < start + Number(m[1])) return;
        body = rest.subarray(start, start + Number(m[1]));
        rest = rest.subarray(start + Number(m[1]));
      }
      messages.push(JSON.parse(new TextDecoder().decode(body)));
    }
  };
  const outDone = (async () => {
    for await (const chunk of child.stdout) {
      const next = new Uint8Array(raw.length + chunk.length);
      next.set(raw);
      next.set(chunk, raw.length);
      raw = next;
      parse();
    }
  })();
  const stderr = new Response(child.stderr).text();
  const status = child.status.then(async (s) => {
    await outDone;
    return { code: s.code, stderr: await stderr };
  });
  return {
    messages,
    raw: () => raw,
    send: (bytes) => writer.write(new TextEncoder().encode(bytes)),
    answer: (id) => waitUntil(`the answer to request ${id}`, () => messages.find((m) => m.id === id)),
    status,
    async end() {
      await writer.close().catch(() => {});
      return await status;
    },
  };
}

async function withDir(fn: (dir: string) => Promise<void>) {
  const dir = await Deno.makeTempDir({ prefix: "pf-stdio-" });
  await Deno.writeTextFile(`${dir}/config.jsonc`, "{}");
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

const request = (id: number, method: string, params: unknown = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params });

Deno.test("serve --stdio: NDJSON on stdin/stdout, a private socket the panes get, and stdin's end stops it", async () => {
  await withDir(async (dir) => {
    const host = startStdio(dir, "ndjson");
    let paneOk = false;
    try {
      // Pipelined in one write, answered in order.
      await host.send(
        request(1, "system.ping") + "\n" +
          request(2, "workspace.create", {
            pane_name: "s",
            command: 'echo "sock=$PANEFLOW_SOCKET_PATH"; echo from-stdio-$((6*7)); exec cat',
          }) + "\n" + request(3, "system.identify") + "\n",
      );
      await host.answer(3);
      assert.deepEqual(host.messages.map((m) => m.id), [1, 2, 3]);
      assert.equal(host.messages[0].result?.pong, true);
      const socket = host.messages[2].result?.socket as string;
      assert.match(socket, new RegExp(`^${dir}/paneflow-stdio-[^/]+/paneflow\\.sock$`));
      const id = (host.messages[1].result as { surface_id: number }).surface_id;
      // The pane's output, read over stdio.
      let n = 10;
      const text = await waitUntil("the pane's output over stdio", async () => {
        await host.send(request(++n, "surface.read", { surface_id: id, fenced: false }) + "\n");
        const r = (await host.answer(n)).result as { text: string };
        return r.text.includes("from-stdio-42") && r.text;
      });
      // The pane was given the private socket, and the CLI reaches the host through it.
      assert.match(text, new RegExp(`^sock=${socket}$`, "m"));
      const ls = await runCommand(Deno.execPath(), ["run", "-A", "--quiet", `${ROOT}main.ts`, "ls"], {
        env: { PANEFLOW_SOCKET_PATH: socket },
      });
      assert.equal(ls.code, 0, ls.stderr);
      assert.deepEqual(JSON.parse(ls.stdout).surfaces.map((s: { name: string }) => s.name), ["s"]);
      // A bad message gets its error on stdout and the connection goes on.
      await host.send("{not json\n" + request(99, "system.ping") + "\n");
      await host.answer(99);
      assert.equal(host.messages.at(-2)?.error?.code, -32700);
      paneOk = true;
    } finally {
      const { code, stderr } = await host.end();
      if (paneOk) {
        assert.equal(code, 0, stderr);
        // stdout held protocol messages only; the log went to stderr.
        const lines = new TextDecoder().decode(host.raw()).split("\n").filter((l) => l);
        assert.ok(lines.every((l) => JSON.parse(l).jsonrpc === "2.0"), lines.join("\n"));
        assert.match(stderr, /listening on .* and stdio/);
        // The private socket's directory is gone with the host.
        const left = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
          n.startsWith("paneflow-stdio-")
        );
        assert.deepEqual(left, []);
      }
    }
  });
});

Deno.test("serve --stdio --framing lsp: Content-Length frames both ways; a broken header ends the session", async () => {
  await withDir(async (dir) => {
    const host = startStdio(dir, "lsp");
    const frame = (body: string, headers = "") =>
      `${headers}Content-Length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
    // Two messages in one write, one with another header and a lowercase name; a
    // multi-byte name, so a character count would cut the message short.
    await host.send(
      frame(request(1, "system.ping")) +
        frame(
          request(2, "workspace.create", { name: "café ☕", command: "exec cat" }),
          "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n",
        )
          .replace("Content-Length", "content-length"),
    );
    await host.answer(2);
    assert.equal(host.messages[0].result?.pong, true);
    assert.equal(host.messages[1].result?.title, "café ☕");
    // Each answer is one frame whose length counts bytes.
    const text = new TextDecoder().decode(host.raw());
    const frames = [...text.matchAll(/Content-Length: (\d+)\r\n\r\n/g)];
    assert.equal(frames.length, 2);
    // A header that cannot be parsed: a parse error, then the session (and host) ends.
    await host.send("Content-Length: twelve\r\n\r\n{}");
    const { code, stderr } = await host.status;
    assert.equal(code, 0, stderr);
    const last = host.messages.at(-1)!;
    assert.equal(last.error?.code, -32700);
    assert.match(last.error!.message, /Content-Length is not a number/);
  });
});

/** Starts a pane running `cat` over stdio and waits until it echoes; returns its id. */
async function catPane(host: StdioHost, id: number, frame: (body: string) => string): Promise<number> {
  await host.send(frame(request(id, "workspace.create", { pane_name: "kept", command: "exec cat" })));
  return ((await host.answer(id)).result as { surface_id: number }).surface_id;
}

/** The pane still runs its program: it is not exited and echoes what it is sent. */
async function assertAlive(host: StdioHost, pane: number, ids: number[], frame: (body: string) => string) {
  const [send, first] = ids;
  await host.send(frame(request(send, "surface.send_text", { surface_id: pane, text: "still-here\r" })));
  assert.equal((await host.answer(send)).error, undefined);
  let n = first;
  await waitUntil("the pane to echo after the oversized message", async () => {
    await host.send(frame(request(++n, "surface.read", { surface_id: pane, fenced: false })));
    return ((await host.answer(n)).result as { text: string }).text.includes("still-here");
  });
  await host.send(frame(request(++n, "surface.list")));
  const { surfaces } = (await host.answer(n)).result as {
    surfaces: { surface_id: number; exited: boolean }[];
  };
  assert.deepEqual(surfaces.map((s) => [s.surface_id, s.exited]), [[pane, false]]);
}

Deno.test("serve --stdio: a line over 1 MiB is answered -32600 and skipped; the host, its panes and the session go on", async () => {
  await withDir(async (dir) => {
    const host = startStdio(dir, "ndjson");
    const line = (body: string) => body + "\n";
    try {
      const pane = await catPane(host, 1, line);
      // A whole oversized request, then a ping in the same write.
      const big = request(2, "system.ping", { pad: "x".repeat(1024 * 1024 + 10) });
      await host.send(line(big) + line(request(3, "system.ping")));
      await host.answer(3);
      const error = host.messages.find((m) => m.id === null && m.error);
      assert.equal(error?.error?.code, -32600);
      assert.match(error!.error!.message, /exceeds 1048576 bytes; skipped/);
      assert.equal(host.messages.find((m) => m.id === 3)?.result?.pong, true);
      // A line still arriving when it passes the cap: answered once, the rest dropped up to its newline.
      for (let i = 0; i < 3; i++) await host.send("y".repeat(512 * 1024));
      await host.send('tail"}\n' + line(request(4, "system.ping")));
      assert.equal((await host.answer(4)).result?.pong, true);
      assert.equal(host.messages.filter((m) => m.error?.code === -32600).length, 2);
      await assertAlive(host, pane, [5, 10], line);
    } finally {
      const { code, stderr } = await host.end();
      assert.equal(code, 0, stderr);
      // The host ended because stdin did, not before: one "stdin ended", after the test's end.
      assert.equal(stderr.match(/stdin ended/g)?.length, 1, stderr);
    }
  });
});

Deno.test("serve --stdio --framing lsp: a body over 1 MiB is answered -32600 and skipped by its Content-Length", async () => {
  await withDir(async (dir) => {
    const host = startStdio(dir, "lsp");
    const frame = (body: string) => `Content-Length: ${new TextEncoder().encode(body).length}\r\n\r\n${body}`;
    try {
      const pane = await catPane(host, 1, frame);
      // The oversized body (a JSON string holding newlines and a header-like text, which must not
      // resync the stream) and a ping right behind it.
      const pad = "Content-Length: 2\r\n\r\n{}\n".repeat(50_000);
      await host.send(frame(request(2, "system.ping", { pad })) + frame(request(3, "system.ping")));
      await host.answer(3);
      const errors = host.messages.filter((m) => m.error);
      assert.equal(errors.length, 1, JSON.stringify(errors));
      assert.equal(errors[0].error?.code, -32600);
      assert.match(errors[0].error!.message, /exceeds 1048576 bytes; skipped/);
      await assertAlive(host, pane, [5, 10], frame);
    } finally {
      const { code, stderr } = await host.end();
      assert.equal(code, 0, stderr);
      assert.equal(stderr.match(/stdin ended/g)?.length, 1, stderr);
    }
  });
});

Deno.test("serve: --framing needs --stdio, takes ndjson or lsp, and --stdio excludes --detach", async () => {
  const run = (...args: string[]) =>
    runCommand(Deno.execPath(), ["run", "-A", "--quiet", `${ROOT}main.ts`, "serve", ...args]);
  const [noStdio, badFraming, both] = await Promise.all([
    run("--framing", "lsp"),
    run("--stdio", "--framing", "xml"),
    run("--stdio", "--detach"),
  ]);
  assert.deepEqual([noStdio.code, badFraming.code, both.code], [2, 2, 2]);
  assert.match(noStdio.stderr, /--framing needs --stdio/);
  assert.match(badFraming.stderr, /--framing must be ndjson or lsp, not "xml"/);
  assert.match(both.stderr, /--stdio and --detach are exclusive/);
});
