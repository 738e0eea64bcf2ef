/// <reference lib="dom" />
/**
 * `paneflow web` (docs/web.md): the separate web process in front of a real
 * host, checked over plain HTTP/WebSocket (auth, Origin, CORS, the write
 * gate) and in a real browser (Debian's chromium via playwright-core): text
 * and colours in the tiles, live panes, input off and on, an agent badge that
 * follows a real Claude Code against the offline mock, and a host restart.
 *
 * PANEFLOW_WEB_SCREENSHOT=1 copies the agent test's screenshot to docs/web.png.
 */
import assert from "node:assert/strict";
import { ROOT, spawnServe, type TestHost, waitUntil, withHost } from "./_harness.ts";
import { browserTest, launchBrowser, startWeb, tileBadge, tileText, waitTile } from "./_web.ts";
import { startAgent, submit } from "./_agents.ts";
import { subscribe } from "./_stream.ts";

const BROWSER = { sanitizeOps: false, sanitizeResources: false };

async function newPane(host: TestHost, command: string, name: string): Promise<number> {
  const r = await host.call("workspace.create", { command, pane_name: name });
  return r.surface_id;
}

async function screenText(host: TestHost, id: number): Promise<string> {
  const r = await host.call("surface.read", { surface_id: id, fenced: false });
  return r.text;
}

/** Opens a WebSocket the way the page does; resolves with the first messages or the failure. */
function wsHello(base: string, token: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base.replace("http", "ws")}ws`, ["paneflow", `paneflow-token.${token}`]);
    ws.onmessage = (e) => {
      ws.close();
      resolve(JSON.parse(e.data));
    };
    ws.onerror = () => reject(new Error("WebSocket refused"));
  });
}

/** Sends each message on a fresh page connection and returns the error the server answers to each. */
async function wsExchange(base: string, token: string, messages: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const m of messages) {
    out.push(
      await new Promise<string>((resolve, reject) => {
        const ws = new WebSocket(`${base.replace("http", "ws")}ws`, ["paneflow", `paneflow-token.${token}`]);
        ws.onopen = () => ws.send(m);
        ws.onmessage = (e) => {
          const msg = JSON.parse(e.data);
          if (msg.t !== "error") return;
          ws.close();
          resolve(msg.message);
        };
        ws.onerror = () => reject(new Error("WebSocket refused"));
      }),
    );
  }
  return out;
}

/** A WebSocket upgrade by hand (fetch), so the test controls Origin and the token. */
async function upgrade(base: string, headers: Record<string, string>): Promise<number> {
  const r = await fetch(`${base}ws`, {
    headers: {
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
      ...headers,
    },
  });
  await r.body?.cancel();
  return r.status;
}

Deno.test("web: the token guards every request but the loader; foreign Origin and CORS refused; gate reason", async () => {
  await withHost({ scripting: false }, async (host) => {
    const web = await startWeb(host, ["--listen", "127.0.0.1:0", "--input"]);
    try {
      const { base, token } = web;
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      // The loader: served without the token, holding no data and no token.
      const loader = await fetch(base);
      const html = await loader.text();
      assert.equal(loader.status, 200);
      assert.ok(!html.includes(token));
      assert.match(loader.headers.get("content-security-policy") ?? "", /default-src 'none'/);
      assert.equal(loader.headers.get("access-control-allow-origin"), null);
      // Everything else: 401 without the token, 401 with a wrong one.
      const wrong = token.slice(0, -1) + (token.endsWith("A") ? "B" : "A");
      for (
        const path of ["assets/page/app.js", "assets/xterm.js", "assets/xterm.css", "ws", "nothing", "api"]
      ) {
        for (const auth of [undefined, `Bearer ${wrong}`, `Bearer `, `Basic ${token}`]) {
          const r = await fetch(`${base}${path}`, { headers: auth ? { authorization: auth } : {} });
          await r.body?.cancel();
          assert.equal(r.status, 401, `${path} with ${auth ?? "no token"}`);
          assert.equal(r.headers.get("access-control-allow-origin"), null);
        }
      }
      const pre = await fetch(`${base}assets/page/app.js`, {
        method: "OPTIONS",
        headers: { origin: "http://evil.example", "access-control-request-method": "GET" },
      });
      await pre.body?.cancel();
      assert.equal(pre.status, 401);
      assert.equal(pre.headers.get("access-control-allow-origin"), null);
      // With the token: the assets, xterm.js from the npm package.
      const js = await fetch(`${base}assets/xterm.js`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(js.status, 200);
      assert.match(await js.text(), /Terminal/);
      // WebSocket: no token, wrong token, foreign Origin refused; the page's own origin accepted.
      const host_ = new URL(base).host;
      assert.equal(await upgrade(base, { "sec-websocket-protocol": "paneflow" }), 401);
      assert.equal(
        await upgrade(base, { "sec-websocket-protocol": `paneflow, paneflow-token.${wrong}` }),
        401,
      );
      assert.equal(
        await upgrade(base, {
          "sec-websocket-protocol": `paneflow, paneflow-token.${token}`,
          origin: "http://evil.example",
        }),
        403,
      );
      assert.equal(
        await upgrade(base, {
          "sec-websocket-protocol": `paneflow, paneflow-token.${token}`,
          origin: `http://localhost.evil.example`,
        }),
        403,
      );
      assert.equal(
        await upgrade(base, {
          "sec-websocket-protocol": `paneflow, paneflow-token.${token}`,
          origin: `http://${host_}`,
        }),
        101,
      );
      // --input against a host whose write gate is closed: read-only, and the page is told why.
      const hello = await wsHello(base, token);
      assert.equal(hello.t, "hello");
      const input = hello.input as { enabled: boolean; reason: string; answer: boolean };
      assert.equal(input.enabled, false);
      assert.equal(input.answer, false);
      assert.match(input.reason, /write gate is closed.*PANEFLOW_IPC_SCRIPTING=1/);
      // Messages from a page are checked; input is refused while the gate is closed.
      const said = await wsExchange(base, token, [
        "not json",
        JSON.stringify({ t: "input", id: 1 }),
        JSON.stringify({ t: "focus", id: 1, extra: true }),
        "x".repeat(300 * 1024),
        JSON.stringify({ t: "input", id: 1, data: "echo hi\r" }),
        JSON.stringify({ t: "answer", id: 1, answer: "approve", dialog_id: "0a1b2c3d" }),
        JSON.stringify({ t: "answer", id: 1, answer: "maybe", dialog_id: "0a1b2c3d" }),
      ]);
      assert.deepEqual(said, [
        "Message refused: not JSON",
        said[1],
        said[2],
        "Message refused: expected one JSON text message of at most 256 KiB",
        said[4],
        said[5],
        said[6],
      ]);
      assert.match(said[1], /^Message refused: /);
      assert.match(said[2], /^Message refused: /);
      assert.match(said[4], /^Read-only: the host's write gate is closed/);
      assert.match(said[5], /^Read-only: the host's write gate is closed/, "no answer through a closed gate");
      assert.match(said[6], /^Message refused: /);
      // The token is never in the logs.
      assert.ok(!web.stderr().includes(token), web.stderr());
      assert.match(web.stderr(), /serving http:\/\/127\.0\.0\.1:\d+\/ for the host/);
    } finally {
      await web.stop();
    }
    assert.ok(!web.stderr().includes(web.token));

    // Another address: a warning; a bad --listen: usage error, exit 2.
    const open = await startWeb(host, ["--listen", "0.0.0.0:0"]);
    try {
      assert.match(open.stderr(), /WARNING: listening on 0\.0\.0\.0, not loopback/);
    } finally {
      await open.stop();
    }
    const bad = await host.cli(["web", "--listen", "nowhere"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--listen "nowhere" is not HOST:PORT/);
  });
});

Deno.test({
  name: "web: tiles show text and colours in the host's layout, live; typing is refused without --input",
  ...BROWSER,
  ...browserTest(),
  async fn() {
    await withHost({}, async (host) => {
      const a = await newPane(
        host,
        `printf '\\033[31mRED-TEXT\\033[0m plain \\033[1;32mGREEN\\033[0m 漢字\\n'; exec sh`,
        "colors",
      );
      const b = (await host.call("surface.split", {
        direction: "h",
        surface_id: a,
        command: "echo right-pane; exec sh",
        name: "right",
      })).surface_id;
      const web = await startWeb(host);
      const browser = await launchBrowser();
      try {
        const { page } = browser;
        await page.goto(web.url);
        await waitTile(page, a, "RED-TEXT plain GREEN");
        await waitTile(page, b, "right-pane");
        // The fragment is gone from the address bar once read.
        assert.ok(!page.url().includes("token"), page.url());
        // Colours: the span holding RED-TEXT is drawn red, GREEN green and bold.
        const colour = (text: string) =>
          page.evaluate((text) => {
            const span = [...document.querySelectorAll(".tile .xterm-rows span")].find((s) =>
              s.textContent === text
            );
            if (!span) return null;
            const st = getComputedStyle(span);
            return { color: st.color, weight: st.fontWeight, cls: span.className };
          }, text);
        const red = await colour("RED-TEXT");
        assert.ok(red, "a span holds RED-TEXT");
        const [r, g] = red.color.match(/\d+/g)!.map(Number);
        assert.ok(r > 150 && g < 100, `RED-TEXT is red: ${JSON.stringify(red)}`);
        const green = await colour("GREEN");
        assert.ok(green);
        const [r2, g2] = green.color.match(/\d+/g)!.map(Number);
        assert.ok(g2 > 150 && r2 < 150, `GREEN is green: ${JSON.stringify(green)}`);
        assert.ok(
          Number(green.weight) >= 600 || green.cls.includes("bold"),
          `GREEN is bold: ${JSON.stringify(green)}`,
        );
        // The host's layout: side by side, split h.
        const boxes = await page.evaluate(() =>
          [...document.querySelectorAll<HTMLElement>(".tile")].map((t) => {
            const r = t.getBoundingClientRect();
            return { id: Number(t.dataset.surfaceId), x: r.x, y: r.y, w: r.width };
          })
        );
        const [ta, tb] = [boxes.find((x) => x.id === a)!, boxes.find((x) => x.id === b)!];
        assert.ok(tb.x > ta.x + ta.w / 2 && Math.abs(tb.y - ta.y) < 2, JSON.stringify(boxes));
        // Headers: id, name, command.
        const head = await page.textContent(`.tile[data-surface-id="${a}"] .head`);
        assert.match(head ?? "", new RegExp(`#${a}\\s*colors`));

        // Live: new output, a new pane, an exit, a close, with no reload.
        await host.call("surface.send_text", { surface_id: b, text: "echo live-$((40+2))\r" });
        await waitTile(page, b, "live-42");
        const c = await newPane(host, "echo third-pane; sleep 0.3; exit 3", "third");
        await waitTile(page, c, "third-pane");
        await waitUntil("the exited badge", async () => {
          const badge = await tileBadge(page, c);
          return badge?.text === "exited 3" ? badge : false;
        });
        await host.call("surface.close", { surface_id: c });
        await waitUntil("the closed tile to go", async () => (await tileText(page, c)) === null);

        // Focus: click the tile, full size; typing is refused and the page says why.
        await page.click(`.tile[data-surface-id="${b}"]`);
        await page.waitForSelector(`#focus.show[data-surface-id="${b}"]`);
        const ro = await page.textContent("#focus .ro");
        assert.match(ro ?? "", /Read-only: paneflow web was started without --input/);
        await page.keyboard.type("echo typed-$((6*7))");
        await page.keyboard.press("Enter");
        // And a page that sends input anyway (its own script edited) is refused by the server.
        await page.evaluate((id) => {
          // deno-lint-ignore no-explicit-any
          (globalThis as any).paneflowWeb.ws.send(
            JSON.stringify({ t: "input", id, data: "echo forced-$((6*7))\r" }),
          );
        }, b);
        await waitUntil("the refusal", async () => {
          const t = await page.textContent("#focus .ro");
          return /without --input/.test(t ?? "") ? t : false;
        });
        // A later command shows up, and neither refused line did.
        await host.call("surface.send_text", { surface_id: b, text: "echo after-$((40+2))\r" });
        await waitTile(page, b, "after-42");
        const text = await screenText(host, b);
        assert.ok(!text.includes("typed-42") && !text.includes("forced-42"), text);
        await page.keyboard.press("Escape");
        await page.waitForSelector("#focus", { state: "hidden" });
      } finally {
        await browser.close();
        await web.stop();
      }
      assert.ok(!web.stderr().includes(web.token));
    });
  },
});

Deno.test({
  name: "web --input: a focused tile types into its pane; a paste goes bracketed",
  ...BROWSER,
  ...browserTest(),
  async fn() {
    await withHost({}, async (host) => {
      const shell = await newPane(host, "exec sh", "shell");
      const paste = (await host.call("surface.split", {
        direction: "v",
        surface_id: shell,
        command: `printf '\\033[?2004h'; stty -echo; printf 'paste-ready\\n'; exec cat -v`,
        name: "paste",
      })).surface_id;
      const web = await startWeb(host, ["--input"]);
      const browser = await launchBrowser();
      try {
        const { page } = browser;
        await page.goto(web.url);
        await waitTile(page, paste, "paste-ready");
        assert.match(await page.textContent("#mode") ?? "", /input on/);
        await page.click(`.tile[data-surface-id="${shell}"]`);
        await page.waitForSelector(`#focus.show[data-surface-id="${shell}"]`);
        assert.match(await page.textContent("#focus .ro") ?? "", /input on/);
        await page.keyboard.type("echo typed-$((6*7))");
        await page.keyboard.press("Enter");
        await waitUntil("the typed command's output", async () => {
          const t = await screenText(host, shell);
          return /^typed-42$/m.test(t) ? t : false;
        });
        // The focused view shows it too.
        await waitUntil(
          "the focused view to show it",
          () =>
            page.evaluate(() =>
              document.querySelector("#focus .xterm-rows")?.textContent?.includes("typed-42")
            ),
        );
        await page.click("#focus button");
        // Paste into the pane that asked for bracketed paste: cat -v shows the brackets.
        await page.click(`.tile[data-surface-id="${paste}"]`);
        await page.waitForSelector(`#focus.show[data-surface-id="${paste}"]`);
        await page.evaluate(() => {
          const dt = new DataTransfer();
          dt.setData("text/plain", "pasted-text");
          document.querySelector("#focus textarea")!.dispatchEvent(
            new ClipboardEvent("paste", { clipboardData: dt, bubbles: true, cancelable: true }),
          );
        });
        await page.keyboard.press("Enter");
        await waitUntil("the bracketed paste", async () => {
          const t = await screenText(host, paste);
          if (!t.includes("^[[200~pasted-text^[[201~")) throw new Error(`pane shows: ${t}`);
          return t;
        });
      } finally {
        await browser.close();
        await web.stop();
      }
    });
  },
});

Deno.test({
  name: "web: the page says the host is gone and comes back with the new host",
  ...BROWSER,
  ...browserTest(),
  async fn() {
    await withHost({}, async (host) => {
      const id = await newPane(host, "echo before-restart; exec sh", "before");
      const web = await startWeb(host);
      const browser = await launchBrowser();
      let second: ReturnType<typeof spawnServe> | null = null;
      try {
        const { page } = browser;
        await page.goto(web.url);
        await waitTile(page, id, "before-restart");
        await host.call("system.shutdown");
        await page.waitForSelector("#banner.show", { timeout: 10_000 });
        assert.match(await page.textContent("#banner") ?? "", /host is gone/);
        // A new host on the same socket: the banner goes, its panes show.
        second = spawnServe(host.env);
        await waitUntil("the new host", async () => (await host.rpc("system.ping")).result, {
          timeoutMs: 15_000,
        });
        const again = await newPane(host, "echo after-restart; exec sh", "after");
        await waitTile(page, again, "after-restart", 15_000);
        await page.waitForSelector("#banner", { state: "hidden" });
        assert.equal(await page.$(`.tile[data-surface-id="${id}"]`) === null || id === again, true);
      } finally {
        await browser.close();
        await web.stop();
        if (second) {
          try {
            second.child.kill("SIGTERM");
          } catch { /* gone */ }
          await second.exited;
        }
      }
    });
  },
});

Deno.test({
  name:
    "web: an agent's badge follows a real Claude Code from idle to thinking to finished; a card's Approve answers a dialog",
  ...BROWSER,
  ...browserTest(),
  async fn() {
    await withHost({}, async (host) => {
      const agent = await startAgent(host, { name: "claude", hooked: true });
      const reviewer = await startAgent(host, { name: "reviewer", hooked: true });
      const browser = await launchBrowser();
      // --input: the reviewer's card answers its dialog at the end.
      const web = await startWeb(host, ["--input"]);
      const events = await subscribe(host.socket, { types: ["agent_state"] });
      try {
        // Company for the screenshot: a shell with colours beside the agent.
        await host.call("surface.split", {
          direction: "h",
          surface_id: agent.surfaceId,
          name: "build",
          command:
            `printf '\\033[1;34m==> building\\033[0m\\n\\033[32m✔ 42 tests passed\\033[0m\\n\\033[33mwarning:\\033[0m 1 deprecation\\n'; exec sh`,
        });
        const { page } = browser;
        await page.setViewportSize({ width: 1400, height: 1500 });
        await page.goto(web.url);
        await waitTile(page, agent.surfaceId, "❯", 20_000);
        // Idle: no badge, or an idle one.
        const idle = await tileBadge(page, agent.surfaceId);
        assert.ok(idle === null || /idle|finished|unknown/.test(idle.state ?? ""), JSON.stringify(idle));

        // The other agent asks for permission: waiting_for_input with the dialog's message.
        reviewer.mock.enqueue({
          kind: "bash",
          command: "touch reviewed.txt",
          description: "Mark as reviewed",
          then: "Marked.",
        });
        await submit(host, reviewer.pane, "mark it reviewed");
        const waiting = await waitUntil("the waiting_for_input badge", async () => {
          const b = await tileBadge(page, reviewer.surfaceId);
          return b?.state === "waiting_for_input" && b.text.includes("touch reviewed.txt") ? b : false;
        }, { timeoutMs: 20_000, intervalMs: 50 });
        assert.match(waiting.text, /^waiting for input: /);

        // Thinking, within 1 s of the host's agent_state event.
        agent.mock.enqueue({ kind: "hold", text: "Working on it" });
        const from = events.frames.length;
        await submit(host, agent.pane, "say hello");
        await events.waitFor(
          "agent_state thinking",
          (f) => f.surface_id === agent.surfaceId && f.state === "thinking",
          {
            from,
            timeoutMs: 20_000,
          },
        );
        const hostAt = events.times[
          events.frames.findIndex((f, i) =>
            i >= from && f.surface_id === agent.surfaceId && f.state === "thinking"
          )
        ];
        const thinking = await waitUntil("the thinking badge", async () => {
          const b = await tileBadge(page, agent.surfaceId);
          return b?.state === "thinking" ? b : false;
        }, { timeoutMs: 5_000, intervalMs: 20 });
        const lag = performance.now() - hostAt;
        assert.match(thinking.text, /thinking/);
        assert.ok(lag <= 1000, `the badge showed ${Math.round(lag)} ms after the host's agent_state event`);
        // The fleet strip has both agents as cards.
        await waitUntil("the fleet cards", async () => {
          const a = await page.textContent(`#fleet .card[data-surface-id="${agent.surfaceId}"]`);
          const r = await page.textContent(`#fleet .card[data-surface-id="${reviewer.surfaceId}"]`);
          return a?.includes("thinking") && r?.includes("waiting") ? [a, r] : false;
        });
        // The request reached the mock and is held there: the turn is really in progress.
        await waitUntil("the held request", () => agent.mock.holding() > 0, { timeoutMs: 20_000 });
        const shot = `${await Deno.makeTempDir({ prefix: "pf-web-shot-" })}/web.png`;
        await page.screenshot({ path: shot });
        if (Deno.env.get("PANEFLOW_WEB_SCREENSHOT") === "1") {
          await Deno.copyFile(shot, `${ROOT}docs/web.png`);
        }
        await Deno.remove(shot.slice(0, shot.lastIndexOf("/")), { recursive: true });
        agent.mock.release();
        await waitUntil("the finished badge", async () => {
          const b = await tileBadge(page, agent.surfaceId);
          return b?.state === "finished" ? b : false;
        }, { timeoutMs: 20_000, intervalMs: 50 });
        // The reviewer's card answers its dialog: Approve (surface.answer with the card's dialog_id).
        const approve = `#fleet .card[data-surface-id="${reviewer.surfaceId}"] button.approve`;
        await page.click(approve, { timeout: 10_000 });
        const marked = `${reviewer.setup.projectDir}/reviewed.txt`;
        await waitUntil("the approved command", () => Deno.stat(marked).then(() => true, () => false), {
          timeoutMs: 20_000,
        });
        await waitUntil("the reviewer's finished badge", async () => {
          const b = await tileBadge(page, reviewer.surfaceId);
          return b?.state === "finished" ? b : false;
        }, { timeoutMs: 20_000, intervalMs: 50 });
        assert.equal(await page.$(approve), null, "no answer buttons once the dialog is gone");
        console.error(
          `web: the thinking badge came ${Math.round(lag)} ms after the host's agent_state event`,
        );
      } finally {
        await events.close();
        await browser.close();
        await web.stop();
        await agent.dispose();
        await reviewer.dispose();
      }
    });
  },
});

Deno.test("web: a tab that stops reading is not buffered without bound; other tabs stay live", async () => {
  await withHost({}, async (host) => {
    // Ten full-size panes (a workspace each) redrawing their whole screen as fast as they can.
    const flood =
      `perl -e '$|=1; my $i=0; while(1){ print "\\e[H", map({ sprintf("\\e[3%dm%0200d\\e[0m\\n", ($i+$_)%8, $i) } 1..49); $i++ }'`;
    for (let i = 1; i <= 10; i++) await newPane(host, flood, `flood${i}`);
    const web = await startWeb(host);
    const pid = web.pid;
    // A "browser" that upgrades and then never reads a byte. Its receive buffer is 4 KiB (perl
    // sets it before connecting; Deno cannot), so the server's socket backs up after a few
    // frames, whatever the machine's load; loopback TCP would otherwise take several MB first.
    const url = new URL(web.base);
    const handshake =
      `GET /ws HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
      `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n` +
      `Sec-WebSocket-Protocol: paneflow, paneflow-token.${web.token}\r\n\r\n`;
    const stuck = new Deno.Command("perl", {
      args: [
        "-MSocket",
        "-e",
        `socket(my $s, PF_INET, SOCK_STREAM, 0) or die "socket: $!";
         setsockopt($s, SOL_SOCKET, SO_RCVBUF, 4096) or die "setsockopt: $!";
         connect($s, sockaddr_in(${Number(url.port)}, inet_aton("${url.hostname}"))) or die "connect: $!";
         syswrite($s, $ARGV[0]) or die "write: $!"; $| = 1; print "sent\n"; sleep 600;`,
        handshake,
      ],
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const said = stuck.stdout.getReader();
    assert.equal(new TextDecoder().decode((await said.read()).value), "sent\n");
    // A tab that reads.
    let frames = 0;
    let lastAt = 0;
    const ws = new WebSocket(`${web.base.replace("http", "ws")}ws`, [
      "paneflow",
      `paneflow-token.${web.token}`,
    ]);
    ws.onmessage = (e) => {
      if (JSON.parse(e.data).t === "screen") {
        frames++;
        lastAt = performance.now();
      }
    };
    const rss = () => {
      const status = Deno.readTextFileSync(`/proc/${pid}/status`);
      return Number(/VmRSS:\s+(\d+)/.exec(status)![1]) * 1024;
    };
    try {
      await waitUntil("frames on the reading tab", () => frames > 20, { timeoutMs: 20_000 });
      const before = rss();
      let peak = before;
      // The stuck tab's buffers fill, then the server holds back (12 s beside two CPU hogs and two
      // other suites; the server's send buffer still grows to a few hundred KB first).
      await waitUntil("the server to see the stuck tab fall behind", () => {
        peak = Math.max(peak, rss());
        return /a tab reads slowly/.test(web.stderr());
      }, { timeoutMs: 120_000, intervalMs: 200 });
      // Then as long again: what it holds for the stuck tab stays bounded.
      const t0 = performance.now();
      await waitUntil("more flood", () => {
        peak = Math.max(peak, rss());
        return performance.now() - t0 > 5000;
      }, { timeoutMs: 20_000, intervalMs: 200 });
      const at = frames;
      await waitUntil("more frames on the reading tab", () => frames > at + 5, { timeoutMs: 10_000 });
      assert.ok(performance.now() - lastAt < 2000);
      assert.ok(peak - before < 64 * 1024 * 1024, `web RSS grew ${(peak - before) >> 20} MiB`);
    } finally {
      ws.close();
      stuck.kill();
      said.releaseLock();
      await stuck.stdout.cancel();
      await stuck.status;
      await web.stop();
    }
    assert.match(web.stderr(), /a slow tab closed; \d+ frames were skipped/);
  });
});

/** The highest `tick-<tag>-N` a text shows (0: none). */
function lastTick(text: string | null, tag: string): number {
  let n = 0;
  for (const m of (text ?? "").matchAll(new RegExp(`tick-${tag}-(\\d+)`, "g"))) n = Math.max(n, Number(m[1]));
  return n;
}

Deno.test({
  name: "web: tiles out of view and hidden tabs are neither sent nor drawn; they catch up when shown",
  ...BROWSER,
  ...browserTest(),
  async fn() {
    await withHost({}, async (host) => {
      const ticker = (tag: string) => `i=0; while :; do i=$((i+1)); echo tick-${tag}-$i; sleep 0.05; done`;
      const a = await newPane(host, ticker("a"), "seen");
      const b = await newPane(host, ticker("b"), "below");
      const web = await startWeb(host);
      const browser = await launchBrowser();
      try {
        const { page } = browser;
        // A short window: the second workspace is far below the fold.
        await page.setViewportSize({ width: 1000, height: 300 });
        await page.goto(web.url);
        await waitTile(page, a, /tick-a-\d+/);
        const below = await page.evaluate((id) => {
          const r = document.querySelector(`.tile[data-surface-id="${id}"]`)!.getBoundingClientRect();
          return r.top - innerHeight;
        }, b);
        assert.ok(below > 250, `tile ${b} is ${below} px below the window`);
        const stats = () =>
          page.evaluate(([a, b]) => {
            // deno-lint-ignore no-explicit-any
            const s = (globalThis as any).paneflowWeb;
            return { a: s.tiles.get(a).draws, b: s.tiles.get(b).draws, received: s.drawn.received };
          }, [a, b]);
        // The tile in view moves; the one below is never drawn.
        const s0 = await stats();
        await waitUntil("tile a to be redrawn", async () => (await stats()).a >= s0.a + 5, {
          timeoutMs: 10_000,
        });
        assert.equal((await stats()).b, 0, "the tile out of view was drawn");
        // Scrolled into view: it shows the pane's newest output at once.
        const hostB = lastTick(await screenText(host, b), "b");
        await page.evaluate(
          (id) => document.querySelector(`.tile[data-surface-id="${id}"]`)!.scrollIntoView(),
          b,
        );
        await waitUntil("tile b to catch up", async () => lastTick(await tileText(page, b), "b") >= hostB, {
          timeoutMs: 5_000,
        });

        // Hidden (another tab in front): nothing is sent or drawn; shown again, it catches up.
        const setHidden = (hidden: boolean) =>
          page.evaluate((hidden) => {
            Object.defineProperty(document, "visibilityState", {
              configurable: true,
              get: () => hidden ? "hidden" : "visible",
            });
            document.dispatchEvent(new Event("visibilitychange"));
          }, hidden);
        await setHidden(true);
        // What was already on its way may still come; then nothing.
        const t0 = performance.now();
        await waitUntil("half a second", () => performance.now() - t0 > 500, { timeoutMs: 5_000 });
        const h0 = await stats();
        const t1 = performance.now();
        await waitUntil("two seconds hidden", () => performance.now() - t1 > 2000, { timeoutMs: 10_000 });
        const h1 = await stats();
        assert.equal(h1.received, h0.received, "screens were sent to a hidden tab");
        assert.equal(h1.a + h1.b, h0.a + h0.b, "tiles were drawn in a hidden tab");
        const hostA = lastTick(await screenText(host, a), "a");
        await setHidden(false);
        await page.evaluate(
          (id) => document.querySelector(`.tile[data-surface-id="${id}"]`)!.scrollIntoView(),
          a,
        );
        await waitUntil("tile a to catch up", async () => lastTick(await tileText(page, a), "a") >= hostA, {
          timeoutMs: 5_000,
        });
      } finally {
        await browser.close();
        await web.stop();
      }
    });
  },
});

Deno.test({
  name: "web: a tile follows a program into the alternate screen and back out",
  ...BROWSER,
  ...browserTest(),
  async fn() {
    await withHost({}, async (host) => {
      const id = await newPane(
        host,
        `printf 'normal-before\\n'; read x; printf '\\033[?1049h\\033[H\\033[7mALT-SCREEN\\033[0m\\n'; read x; printf '\\033[?1049l'; echo normal-after; exec sh`,
        "alt",
      );
      const web = await startWeb(host);
      const browser = await launchBrowser();
      try {
        const { page } = browser;
        await page.goto(web.url);
        await waitTile(page, id, "normal-before");
        await host.call("surface.send_text", { surface_id: id, text: "\r" });
        const alt = await waitTile(page, id, "ALT-SCREEN");
        assert.ok(!alt.includes("normal-before"), alt);
        await host.call("surface.send_text", { surface_id: id, text: "\r" });
        const back = await waitTile(page, id, "normal-after");
        assert.ok(back.includes("normal-before") && !back.includes("ALT-SCREEN"), back);
      } finally {
        await browser.close();
        await web.stop();
      }
    });
  },
});
