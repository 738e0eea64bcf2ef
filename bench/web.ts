/**
 * What `paneflow web` costs the host (docs/web.md): 20 busy panes (each prints a
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
 * With `--browser` it also reports Chromium's CPU (all its processes, by
 * process type and by renderer thread: /proc), and with `--profile` what one
 * tab's main thread spent its time on (CDP `Performance` metrics and a
 * `Profiler` sample of its JavaScript).
 *
 *   deno run -A bench/web.ts [--tabs 10] [--panes 20] [--seconds 15] [--browser [--profile]]
 *
 * Writes bench/out/web.json.
 *
 * @module
 */
import { parseArgs } from "node:util";
import { cleanupAll, MAIN, onCleanup, pingWorker, ROOT, startHost } from "./procs.ts";
import { chromiumCpu, cpuDelta } from "./_chromium.ts";
import { type Profile, summarize } from "./_cpuprofile.ts";

const { values } = parseArgs({
  options: {
    tabs: { type: "string", default: "10" },
    panes: { type: "string", default: "20" },
    seconds: { type: "string", default: "15" },
    browser: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    // Skip the phase without the view (when only the view's own cost is wanted).
    "no-baseline": { type: "boolean", default: false },
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

function metrics(r: { metrics: { name: string; value: number }[] }): Record<string, number> {
  return Object.fromEntries(r.metrics.map((m) => [m.name, m.value]));
}

/** Measures `SECONDS` of ping round trips and CPU. */
async function measure(hostPid: number, socket: string, webPid?: number, profile?: string) {
  const { stop } = await pingWorker(socket);
  const t0 = performance.now();
  const c0 = cpuSeconds(hostPid);
  const w0 = webPid ? cpuSeconds(webPid) : 0;
  const b0 = profile ? chromiumCpu(profile) : null;
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  const host = (cpuSeconds(hostPid) - c0) / elapsed;
  const web = webPid ? (cpuSeconds(webPid) - w0) / elapsed : 0;
  const b1 = profile ? chromiumCpu(profile) : null;
  const samples = (await stop()).sort((a, b) => a - b);
  const chromium = b0 && b1
    ? {
      chromium_cpu_core_pct: +([...b1.byType.values()].reduce((a, b) => a + b, 0) -
        [...b0.byType.values()].reduce((a, b) => a + b, 0)) / elapsed * 100,
      chromium_by_process: cpuDelta(b0.byType, b1.byType, elapsed),
      chromium_renderer_threads: cpuDelta(b0.byThread, b1.byThread, elapsed),
    }
    : {};
  if ("chromium_cpu_core_pct" in chromium) {
    chromium.chromium_cpu_core_pct = +chromium.chromium_cpu_core_pct!.toFixed(1);
  }
  return {
    ping_p50_ms: +pct(samples, 50).toFixed(3),
    ping_p99_ms: +pct(samples, 99).toFixed(3),
    ping_max_ms: +samples[samples.length - 1].toFixed(3),
    pings: samples.length,
    host_cpu_core_pct: +(host * 100).toFixed(1),
    web_cpu_core_pct: +(web * 100).toFixed(1),
    ...chromium,
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
  const base = values["no-baseline"]
    ? {
      ping_p50_ms: NaN,
      ping_p99_ms: NaN,
      ping_max_ms: NaN,
      pings: 0,
      host_cpu_core_pct: NaN,
      web_cpu_core_pct: 0,
    }
    : await measure(host.pid, host.socket);
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
  let browserProfile: string | undefined;
  // deno-lint-ignore no-explicit-any
  let cdp: any = null;
  // deno-lint-ignore no-explicit-any
  const pages: any[] = [];
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
    browserProfile = profile;
    for (let i = 0; i < TABS; i++) {
      const page = await ctx.newPage();
      await page.goto(url);
      pages.push(page);
      if (i === 0 && values.profile) cdp = await ctx.newCDPSession(page);
    }
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
  if (cdp) {
    await cdp.send("Performance.enable");
    await cdp.send("Profiler.enable");
    await cdp.send("Profiler.setSamplingInterval", { interval: 500 });
    await cdp.send("Profiler.start");
  }
  const m0 = cdp ? metrics(await cdp.send("Performance.getMetrics")) : null;
  // What every tab drew (the page's counters), summed.
  const drawnIn = (page: typeof pages[0]) =>
    page.evaluate(() => {
      // deno-lint-ignore no-explicit-any
      const s = (globalThis as any).paneflowWeb;
      if (!s) return null;
      // deno-lint-ignore no-explicit-any
      const tiles = [...s.tiles.values()] as any[];
      return {
        drawn: s.drawn ? { ...s.drawn } : null,
        tiles: tiles.length,
        in_view: tiles.filter((t) => t.inView).length,
        sizes: [...new Set(tiles.map((t) => `${t.term.cols}x${t.term.rows}@${(t.scale ?? 0).toFixed(2)}`))],
      };
    });
  const drawn = async () => {
    const all = await Promise.all(pages.map(drawnIn));
    const first = all[0];
    if (!first?.drawn) return first ?? null;
    for (const d of all.slice(1)) {
      if (!d?.drawn) continue;
      first.drawn.tiles += d.drawn.tiles;
      first.drawn.cells += d.drawn.cells;
      first.drawn.focus += d.drawn.focus;
    }
    return first;
  };
  const d0 = pages.length ? await drawn() : null;
  const withWeb = await measure(host.pid, host.socket, web.pid, browserProfile);
  const d1 = pages.length ? await drawn() : null;
  // What the tabs drew, all together, and Chromium's CPU time per tile drawn.
  const tabsDrew = d0?.drawn && d1?.drawn
    ? {
      tiles_in_view_per_tab: d1.in_view,
      tile_sizes: d1.sizes,
      tiles_drawn_per_s: +((d1.drawn.tiles - d0.drawn.tiles) / SECONDS).toFixed(1),
      cells_drawn_per_s: Math.round((d1.drawn.cells - d0.drawn.cells) / SECONDS),
      chromium_cpu_ms_per_tile_drawn: +(
        (("chromium_cpu_core_pct" in withWeb ? withWeb.chromium_cpu_core_pct! : 0) * 10 * SECONDS) /
        Math.max(1, d1.drawn.tiles - d0.drawn.tiles)
      ).toFixed(2),
    }
    : null;
  if (tabsDrew) console.error(`  drawn:   ${JSON.stringify(tabsDrew)}`);
  let tab0: unknown = null;
  if (cdp && m0) {
    const m1 = metrics(await cdp.send("Performance.getMetrics"));
    const { profile } = await cdp.send("Profiler.stop") as { profile: Profile };
    const { fns } = summarize(profile);
    const span = m1.Timestamp - m0.Timestamp;
    const share = (k: string) => +(((m1[k] - m0[k]) / span) * 100).toFixed(1);
    tab0 = {
      main_thread_core_pct: {
        task: share("TaskDuration"),
        script: share("ScriptDuration"),
        layout: share("LayoutDuration"),
        recalc_style: share("RecalcStyleDuration"),
      },
      layouts_per_s: +((m1.LayoutCount - m0.LayoutCount) / span).toFixed(1),
      style_recalcs_per_s: +((m1.RecalcStyleCount - m0.RecalcStyleCount) / span).toFixed(1),
      nodes: m1.Nodes,
      js_top_ms: Object.fromEntries(
        [...fns].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => [k, +v.toFixed(0)]),
      ),
    };
    console.error(`  tab 0:   ${JSON.stringify(tab0, null, 2)}`);
  }
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
    ...(tabsDrew ? { tabs_drew: tabsDrew } : {}),
    ...(tab0 ? { profiled_tab: tab0 } : {}),
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
