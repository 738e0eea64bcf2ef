/**
 * Plugin and adapter costs, each beside its floor in the same run:
 *
 * 1. classify per screen change: the built-in claude-code classifier over
 *    every captured Claude Code 2.1.328 screen (tests/fixtures/claude), vs the
 *    shared screen rules alone (what `status`/`ps` run: the floor), vs a Lua
 *    plugin's classify through the wasmoon VM (the echo fixture plugin; the
 *    screen crosses into Lua and a table comes back).
 * 2. adapter.turn overhead: a turn on the echo TUI through `paneflow serve
 *    --stdio` (send_prompt + the plugin's wait matcher, stability window
 *    subtracted) vs the same input and wait as raw session.input /
 *    session.wait calls.
 *
 *   deno run -A bench/plugins.ts [--reps N]
 *
 * @module
 */
import { classifyScreen } from "../src/agents/classify.ts";
import { CLAUDE_SCREEN } from "../src/agents/claude_screen.ts";
import { ClaudeCodePlugin } from "../src/plugins/claude_code.ts";
import { loadManifest } from "../src/plugins/manifest.ts";
import { createRuntime } from "../src/plugins/runtime.ts";
import { COMPLETED_TURN_STABLE_MS, splitStatusBar } from "../src/plugins/types.ts";
import { PwClient, spawnPaneflow } from "../tests/_pw.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const repsArg = Deno.args.indexOf("--reps");
const REPS = repsArg >= 0 ? Number(Deno.args[repsArg + 1]) : 20;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// 1. classify
const dir = `${ROOT}tests/fixtures/claude/`;
const screens = [...Deno.readDirSync(dir)].filter((e) => e.name.endsWith(".txt"))
  .map((e) => Deno.readTextFileSync(dir + e.name));
const ctxOf = (screen: string, i: number) => {
  const { body, status } = splitStatusBar(screen);
  return {
    screen,
    body_text: body,
    status_text: status,
    transcript: "",
    sequence: i,
    completed_turn_stable_ms: COMPLETED_TURN_STABLE_MS,
    markers: {},
    cursor: 0,
  };
};
const builtin = new ClaudeCodePlugin();
const echo = await loadManifest(`${ROOT}tests/fixtures/plugins/echo/manifest.toml`);
const lua = await createRuntime(echo.manifest, echo.source);
function perCall(f: (s: string, i: number) => unknown): number {
  for (let i = 0; i < 200; i++) f(screens[i % screens.length], i);
  const n = 2000;
  const t0 = performance.now();
  for (let i = 0; i < n; i++) f(screens[i % screens.length], i);
  return ((performance.now() - t0) / n) * 1000;
}
const floor = perCall((s) => classifyScreen(CLAUDE_SCREEN, s));
const builtinUs = perCall((s, i) => builtin.call("classify", ctxOf(s, i)));
const luaUs = perCall((s, i) => lua.call("classify", ctxOf(s, i)));

// 2. adapter.turn vs raw session calls, over serve --stdio
const tmp = await Deno.makeTempDir({ prefix: "pf-bench-plugins-" });
const child = spawnPaneflow([
  "serve",
  "--stdio",
  "--plugin",
  `${ROOT}tests/fixtures/plugins/echo/manifest.toml`,
], tmp);
const w = child.stdin.getWriter();
const c = new PwClient((b) => w.write(b), child.stdout, "ndjson", async () => await w.close());
const tui = `${ROOT}tests/fixtures/plugins/echo/echo_tui.sh`;
const { adapter } = await c.call("adapter.start", { plugin: "echo", program: "/bin/sh", args: [tui] });
await c.call("adapter.wait", { adapter, timeout_ms: 20_000 });
const { session } = await c.call("session.create", { program: "/bin/sh", args: [tui] });
await c.call("session.wait", {
  session,
  matcher: { type: "contains_text", value: "READY>" },
  timeout_ms: 20_000,
});
const turn: number[] = [];
const raw: number[] = [];
for (let i = 0; i < REPS; i++) {
  let t0 = performance.now();
  await c.call("adapter.turn", { adapter, send: { intent: "send_prompt", params: { prompt: `line ${i}` } } });
  turn.push(performance.now() - t0 - COMPLETED_TURN_STABLE_MS);
  t0 = performance.now();
  await c.call("session.input", { session, action: { type: "text", value: `line ${i}` } });
  await c.call("session.input", { session, action: { type: "key", value: "enter" } });
  await c.call("session.wait", {
    session,
    matcher: {
      type: "all",
      value: [{ type: "contains_text", value: `> line ${i}` }, {
        type: "screen_stable",
        value: { min_ms: 300 },
      }],
    },
  });
  raw.push(performance.now() - t0 - COMPLETED_TURN_STABLE_MS);
}
await w.close();
await child.status;
await Deno.remove(tmp, { recursive: true }).catch(() => {});

const result = {
  classify_us_per_screen: {
    shared_rules_floor: +floor.toFixed(1),
    builtin_claude_code: +builtinUs.toFixed(1),
    lua_plugin_echo: +luaUs.toFixed(1),
  },
  turn_ms_minus_stability_window: {
    adapter_turn_median: +median(turn).toFixed(1),
    raw_session_input_wait_median: +median(raw).toFixed(1),
    overhead_median: +(median(turn) - median(raw)).toFixed(1),
  },
  reps: REPS,
  screens: screens.length,
};
console.log(JSON.stringify(result, null, 2));
