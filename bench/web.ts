/**
 * What `paneflow web` costs the host (issue 18): 20 busy panes (each prints a
 * coloured line every 10 ms, in two tiled workspaces of 10), measured first
 * without the web view and then with `paneflow web` and 10 tabs open on it,
 * in the same run:
 *
 * - `system.ping` round trips every 10 ms on their own connection (p50, p99);
 * - the host process's CPU (all its threads: /proc/<pid>/stat), as a share
 *   of one core, and the difference the web view makes;
 * - the web process's own CPU and the frames each tab received.
 *
 * Tabs are WebSocket clients that parse every frame as the page does; with
 * `--browser` they are real Chromium tabs (the page, xterm.js drawing), which
 * also load the machine the host runs on.
 *
 *   deno run -A bench/web.ts [--tabs 10] [--panes 20] [--seconds 15] [--browser]
 *
 * Writes bench/out/web.json.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { cleanupAll, MAIN, onCleanup, pingWorker, ROOT, startHost } from "./procs.ts";

const { values } = parseArgs({
  options: {
    tabs: { type: "string", default: "10" },
    panes: { type: "string", default: "20" },
    seconds: { type: "string", default: "15" },
    browser: { type: "boolean", default: false },
  },
});
const TABS = Number(values.tabs);
const PANES = Number(values.panes);
const SECONDS = Number(values.seconds);

/** A coloured line every 10 ms, forever. */
const BUSY =
  `perl -e 'use Time::HiRes qw(usleep); $|=1; my $i=0; while(1){ printf "\\e[3%dm%07d\\e[0m build step \\e[1m%s\\e[0m %s\\n", $i%8, $i, "ok", "." x ($i%70); $i++; usleep(10000) }'`;

function cpuSeconds(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(fields[11]) + Number(fields[12]); // utime + stime
  return ticks / 100; // USER_HZ
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Measures `SECONDS` of ping round trips and CPU. */
async function measure(hostPid: number, socket: string, webPid?: number) {
  const { stop } = await pingWorker(socket);
  const t0 = performance.now();
  const c0 = cpuSeconds(hostPid);
  const w0 = webPid ? cpuSeconds(webPid) : 0;
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  const host = (cpuSeconds(hostPid) - c0) / elapsed;
  const web = webPid ? (cpuSeconds(webPid) - w0) / elapsed : 0;
  const samples = (await stop()).sort((a, b) => a - b);
  return {
    ping_p50_ms: +pct(samples, 50).toFixed(3),
    ping_p99_ms: +pct(samples, 99).toFixed(3),
    ping_max_ms: +samples[samples.length - 1].toFixed(3),
    pings: samples.length,
    host_cpu_core_pct: +(host * 100).toFixed(1),
    web_cpu_core_pct: +(web * 100).toFixed(1),
  };
}

async function main() {
  const dir = await Deno.makeTempDir({ prefix: "pf-bench-web-" });
  onCleanup(() => Deno.remove(dir, { recursive: true }).catch(() => {}));
  const host = await startHost(dir, "host", {});
  for (let i = 0; i < PANES; i++) {
    if (i % 10 === 0) await host.rpc.call("workspace.create", { layout: "tiled", command: BUSY });
    else await host.rpc.call("surface.split", { direction: i % 2 ? "h" : "v", command: BUSY });
    if (i % 10 !== 0) await host.rpc.call("workspace.restore_layout", { layout: "tiled" });
  }
  // Let the panes start printing.
  await new Promise((r) => setTimeout(r, 2000));
  console.error(`bench web: ${PANES} busy panes; measuring ${SECONDS} s without the web view`);
  const base = await measure(host.pid, host.socket);
  console.error(`  without: ${JSON.stringify(base)}`);

  const web = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "web", "--listen", "127.0.0.1:0"],
    cwd: ROOT,
    env: host.env,
    stdin: "null",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  onCleanup(async () => {
    try {
      web.kill("SIGTERM");
    } catch { /* gone */ }
    await web.status;
  });
  const reader = web.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("paneflow web exited");
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  web.stdout.cancel().catch(() => {});
  const url = out.trim();
  const [base_, token] = url.split("#token=");

  const counts = Array.from({ length: TABS }, () => ({ frames: 0, bytes: 0 }));
  const closers: (() => Promise<void>)[] = [];
  if (values.browser) {
    const { chromium } = await import("playwright-core");
    const profile = await Deno.makeTempDir({ prefix: "pf-bench-chromium-" });
    const ctx = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
    });
    for (let i = 0; i < TABS; i++) await (await ctx.newPage()).goto(url);
    closers.push(async () => {
      await ctx.close();
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    });
  } else {
    for (let i = 0; i < TABS; i++) {
      const ws = new WebSocket(`${base_.replace("http", "ws")}ws`, ["paneflow", `paneflow-token.${token}`]);
      ws.onmessage = (e) => {
        const m = JSON.parse(e.data);
        if (m.t === "screen") counts[i].frames++;
        counts[i].bytes += e.data.length;
      };
      await new Promise((r) => (ws.onopen = r));
      closers.push(() => {
        ws.close();
        return Promise.resolve();
      });
    }
  }
  await new Promise((r) => setTimeout(r, 2000));
  for (const c of counts) c.frames = c.bytes = 0;
  console.error(
    `bench web: ${TABS} ${values.browser ? "Chromium tabs" : "WebSocket tabs"}; measuring ${SECONDS} s`,
  );
  const withWeb = await measure(host.pid, host.socket, web.pid);
  const frames = counts.map((c) => c.frames);
  console.error(`  with:    ${JSON.stringify(withWeb)}`);
  for (const close of closers) await close();

  const extra = +(withWeb.host_cpu_core_pct - base.host_cpu_core_pct).toFixed(1);
  const result = {
    when: new Date().toISOString(),
    panes: PANES,
    tabs: TABS,
    tab_kind: values.browser ? "chromium" : "websocket",
    seconds: SECONDS,
    without_web: base,
    with_web: withWeb,
    extra_host_cpu_core_pct: extra,
    extra_host_cpu_relative_pct: +((extra / Math.max(0.1, base.host_cpu_core_pct)) * 100).toFixed(1),
    frames_per_tab_per_s: values.browser
      ? null
      : +(frames.reduce((a, b) => a + b, 0) / TABS / SECONDS).toFixed(1),
    targets: {
      ping_p99_le_5ms: withWeb.ping_p99_ms <= 5,
      extra_host_cpu_le_10pct_of_a_core: extra <= 10,
    },
  };
  await Deno.mkdir(`${ROOT}bench/out`, { recursive: true });
  await Deno.writeTextFile(`${ROOT}bench/out/web.json`, JSON.stringify(result, null, 2) + "\n");
  console.log(JSON.stringify(result, null, 2));
}

try {
  await main();
} finally {
  await cleanupAll();
}
