/**
 * tmux's commands on a paneflow host: each reads the model, calls the
 * host's methods and prints what tmux 3.3a prints. A command paneflow cannot
 * honour fails with tmux's wording and a pointer to docs/tmux.md.
 *
 * @module
 */
import { type Command, flagValue, TmuxError } from "./args.ts";
import { currentPane, loadModel, readState, type RunContext, writeState } from "./context.ts";
import { expand } from "./format.ts";
import { hexWord, keyWord } from "./keys.ts";
import {
  activePane,
  currentWindow,
  type Model,
  resolveTarget,
  splitTitle,
  type TargetKind,
  type TPane,
} from "./model.ts";
import { paneLookup } from "./vars.ts";
import { shimEnv } from "./shim.ts";
import { sleep } from "../client/timer.ts";

const DOCS = "see docs/tmux.md";
const PANE_TEMPLATE = "#{session_name}:#{window_index}.#{pane_index}";
const LAYOUTS: Record<string, string> = {
  "tiled": "tiled",
  "even-horizontal": "even_h",
  "even-vertical": "even_v",
  "main-vertical": "main_vertical",
};

function unsupported(what: string): never {
  throw new TmuxError(`${what}: not supported by paneflow (${DOCS})`);
}

/** The shell command of a command's trailing words, as tmux joins them. */
function shellCommand(args: string[]): string | undefined {
  return args.length === 0 ? undefined : args.join(" ");
}

function envPairs(cmd: Command): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of cmd.repeated.get("e") ?? []) {
    const eq = pair.indexOf("=");
    if (eq > 0) env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return env;
}

interface Step {
  ctx: RunContext;
  cmd: Command;
  model: Model;
  current: TPane | null;
}

function target(st: Step, kind: TargetKind): TPane {
  return resolveTarget(st.model, flagValue(st.cmd, "t"), kind, st.current);
}

async function refind(st: Step, id: number): Promise<TPane> {
  const m = await loadModel(st.ctx.client);
  const p = m.panes.find((x) => x.id === id);
  if (!p) throw new TmuxError(`can't find pane: %${id}`);
  return p;
}

async function printNew(st: Step, id: number, template: string) {
  if (!st.cmd.flags.has("P")) return;
  const p = await refind(st, id);
  st.ctx.out.push(expand(flagValue(st.cmd, "F") ?? template, paneLookup(p, readState(st.ctx.socket))));
}

function printEach(st: Step, panes: TPane[], fmt: string) {
  const state = readState(st.ctx.socket);
  for (const p of panes) st.ctx.out.push(expand(fmt, paneLookup(p, state)));
}

function nextSessionName(m: Model): string {
  for (let n = 0;; n++) if (!m.sessions.some((s) => s.name === String(n))) return String(n);
}

async function newSession(st: Step) {
  const { cmd, model, ctx } = st;
  const name = flagValue(cmd, "s") ?? nextSessionName(model);
  if (/[:.]/.test(name)) throw new TmuxError(`invalid session: ${name}`);
  const existing = model.sessions.find((s) => s.name === name);
  if (existing) {
    if (cmd.flags.has("A")) return;
    throw new TmuxError(`duplicate session: ${name}`);
  }
  const window = flagValue(cmd, "n");
  const r = await ctx.client.call("workspace.create", {
    name: window === undefined ? name : `${name}:${window}`,
    ...paneFields(st),
  });
  await printNew(st, r.surface_id, "#{session_name}:");
}

function paneFields(st: Step): { cwd?: string; command?: string; env: Record<string, string> } {
  const cwd = flagValue(st.cmd, "c");
  const command = shellCommand(st.cmd.args);
  return {
    ...(cwd !== undefined ? { cwd } : {}),
    ...(command !== undefined ? { command } : {}),
    env: { ...shimEnv(st.ctx.socket, st.ctx.env), ...envPairs(st.cmd) },
  };
}

async function newWindow(st: Step) {
  const { cmd, ctx } = st;
  const t = flagValue(cmd, "t");
  const session = t === undefined
    ? (st.current?.window.session ?? st.model.sessions[0])
    : target(st, "session").window.session;
  if (!session) throw new TmuxError("no current session");
  const name = flagValue(cmd, "n");
  const r = await ctx.client.call("workspace.create", {
    name: `${session.name}:${name ?? ""}`,
    ...paneFields(st),
  });
  await printNew(st, r.surface_id, PANE_TEMPLATE);
}

async function splitWindow(st: Step) {
  const { cmd, ctx } = st;
  const p = target(st, "pane");
  const size = flagValue(cmd, "l") ?? flagValue(cmd, "p");
  if (size !== undefined && !/^\d+%?$/.test(size)) throw new TmuxError(`invalid size: ${size}`);
  const r = await ctx.client.call("surface.split", {
    direction: cmd.flags.has("h") ? "h" : "v",
    surface_id: p.id,
    ...paneFields(st),
  });
  if (!cmd.flags.has("d")) await ctx.client.call("surface.focus", { surface_id: r.surface_id });
  await printNew(st, r.surface_id, PANE_TEMPLATE);
}

async function respawnPane(st: Step) {
  const p = target(st, "pane");
  if (!p.info.exited && !st.cmd.flags.has("k")) {
    const where = `${p.window.session.name}:${p.window.index}.${p.index}`;
    throw new TmuxError(`respawn pane failed: pane ${where} still active`);
  }
  const { env, ...rest } = paneFields(st);
  await st.ctx.client.call("surface.respawn", { surface_id: p.id, ...rest, env: { ...env } });
}

async function sendKeys(st: Step) {
  const { cmd } = st;
  const p = target(st, "pane");
  let text = "";
  for (const word of cmd.args) {
    if (cmd.flags.has("H")) {
      const byte = hexWord(word);
      if (byte === null) throw new TmuxError(`invalid key: ${word}`);
      text += byte;
    } else text += cmd.flags.has("l") ? word : keyWord(word);
  }
  const n = Number(flagValue(cmd, "N") ?? 1);
  if (text) await st.ctx.client.call("surface.send_text", { surface_id: p.id, text: text.repeat(n) });
}

async function capturePane(st: Step) {
  const { cmd, ctx } = st;
  if (!cmd.flags.has("p")) unsupported("capture-pane without -p (paste buffers)");
  const p = target(st, "pane");
  const start = flagValue(cmd, "S");
  const end = flagValue(cmd, "E");
  const rows = p.info.rows;
  const history = start === "-" ? 4000 : start !== undefined && Number(start) < 0 ? -Number(start) : 0;
  const r = await ctx.client.call("surface.read", {
    surface_id: p.id,
    lines: Math.min(4000, rows + history),
    fenced: false,
    ...(cmd.flags.has("J") ? { join_wrapped: true } : {}),
  }) as unknown as { text?: string; content?: string };
  let lines = String(r.text ?? r.content ?? "").split("\n");
  while (lines.length < rows + history && start !== "-") lines.push("");
  if (end !== undefined && end !== "-" && Number(end) >= 0) lines = lines.slice(0, history + Number(end) + 1);
  ctx.out.push(...lines);
}

async function killPane(st: Step) {
  const p = target(st, "pane");
  const victims = st.cmd.flags.has("a") ? p.window.panes.filter((x) => x.id !== p.id) : [p];
  for (const v of victims) await st.ctx.client.call("surface.close", { surface_id: v.id });
}

async function closeWindows(st: Step, workspaces: number[]) {
  // Highest index first: closing one shifts the later ones down.
  for (const index of [...workspaces].sort((a, b) => b - a)) {
    await st.ctx.client.call("workspace.close", { index });
  }
}

function selectLayout(st: Step) {
  const p = target(st, "pane");
  const name = st.cmd.args[0];
  if (name === undefined) return Promise.resolve();
  const preset = LAYOUTS[name];
  if (preset === undefined) {
    if (name === "main-horizontal") unsupported("select-layout main-horizontal");
    throw new TmuxError(`invalid layout: ${name}`);
  }
  return st.ctx.client.call("workspace.restore_layout", { layout: preset, index: p.window.workspace });
}

async function selectPane(st: Step) {
  const { cmd, ctx } = st;
  let p = target(st, "pane");
  const title = flagValue(cmd, "T");
  if (title !== undefined) {
    const state = readState(ctx.socket);
    state.titles[String(p.id)] = title;
    writeState(ctx.socket, state);
    return;
  }
  const panes = p.window.panes;
  if (cmd.flags.has("L") || cmd.flags.has("U")) p = panes[(p.index - 1 + panes.length) % panes.length];
  if (cmd.flags.has("R") || cmd.flags.has("D")) p = panes[(p.index + 1) % panes.length];
  await ctx.client.call("surface.focus", { surface_id: p.id });
}

function optionScope(st: Step, window: boolean): string {
  const { cmd } = st;
  if (cmd.flags.has("g")) return "g";
  if (cmd.flags.has("p")) return `%${target(st, "pane").id}`;
  if (window || cmd.flags.has("w")) return `@${target(st, "window").window.id}`;
  return `$${target(st, "session").window.session.id}`;
}

function setOption(st: Step, window: boolean) {
  const { cmd, ctx } = st;
  const [name, value] = cmd.args;
  const state = readState(ctx.socket);
  const scope = optionScope(st, window);
  const table = state.options[scope] ??= {};
  if (cmd.flags.has("u") || cmd.flags.has("U")) delete table[name];
  else if (cmd.flags.has("o") && name in table) {
    throw new TmuxError(`already set: ${name}`);
  } else table[name] = cmd.flags.has("a") ? (table[name] ?? "") + (value ?? "") : value ?? "";
  writeState(ctx.socket, state);
}

function showOptions(st: Step, window: boolean) {
  const { cmd, ctx } = st;
  const table = readState(ctx.socket).options[optionScope(st, window)] ?? {};
  const only = cmd.args[0];
  for (const [k, v] of Object.entries(table)) {
    if (only !== undefined && k !== only) continue;
    ctx.out.push(cmd.flags.has("v") ? v : `${k} ${/\s/.test(v) || v === "" ? `"${v}"` : v}`);
  }
}

async function waitFor(st: Step) {
  const { cmd, ctx } = st;
  const channel = cmd.args[0];
  const path = `${ctx.socket}.wait-${encodeURIComponent(channel)}`;
  if (cmd.flags.has("S")) {
    Deno.writeTextFileSync(path, "");
    return;
  }
  if (cmd.flags.has("L") || cmd.flags.has("U")) unsupported("wait-for -L/-U");
  for (;;) {
    try {
      Deno.removeSync(path);
      return;
    } catch {
      await sleep(50);
    }
  }
}

async function attach(st: Step, switchOnly: boolean) {
  const p = target(st, "session");
  if (switchOnly) {
    await st.ctx.client.call("workspace.select", { index: p.window.workspace });
    return;
  }
  if (!Deno.stdin.isTerminal()) throw new TmuxError("open terminal failed: not a terminal");
  const { selfCommand } = await import("../paths.ts");
  const [file, ...args] = selfCommand(["attach", String(p.id)]);
  const { code } = await new Deno.Command(file, {
    args,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  })
    .output();
  if (code !== 0) throw new TmuxError("");
}

function lists(st: Step, name: string): TPane[] {
  const { cmd, model } = st;
  if (name === "list-sessions") return model.sessions.map((s) => activePane(currentWindow(s)));
  if (name === "list-windows") {
    const windows = cmd.flags.has("a") ? model.windows : target(st, "session").window.session.windows;
    return windows.map(activePane);
  }
  if (cmd.flags.has("a")) return model.panes;
  const p = target(st, cmd.flags.has("s") ? "session" : "window");
  return cmd.flags.has("s") ? p.window.session.windows.flatMap((w) => w.panes) : p.window.panes;
}

const DEFAULT_LIST: Record<string, string> = {
  "list-sessions": "#{session_name}: #{session_windows} windows#{?session_attached, (attached),}",
  "list-windows": "#{window_index}: #{window_name}#{window_flags} (#{window_panes} panes) " +
    "[#{window_width}x#{window_height}] #{window_id}#{?window_active, (active),}",
  "list-panes": "#{pane_index}: [#{pane_width}x#{pane_height}] #{pane_id}#{?pane_active, (active),}",
};

function displayMessage(st: Step) {
  const { cmd, ctx } = st;
  const fmt = cmd.args[0] ?? flagValue(cmd, "F") ?? "";
  // tmux 3.3a's display-message may miss its target: it then expands with no pane.
  let p: TPane | null = null;
  try {
    p = target(st, "pane");
  } catch (e) {
    if (!(e instanceof TmuxError)) throw e;
  }
  if (p) printEach(st, [p], fmt);
  else ctx.out.push(expand(fmt, () => undefined));
}

function listing(st: Step) {
  const name = st.cmd.spec.name;
  printEach(st, lists(st, name), flagValue(st.cmd, "F") ?? DEFAULT_LIST[name]);
}

async function renameSession(st: Step) {
  const s = target(st, "session").window.session;
  const name = st.cmd.args[0];
  if (/[:.]/.test(name) || name === "") throw new TmuxError(`bad session name: ${name}`);
  if (st.model.sessions.some((x) => x.name === name && x !== s)) {
    throw new TmuxError(`duplicate session: ${name}`);
  }
  for (const w of s.windows) {
    const { window } = splitTitle(w.title);
    await st.ctx.client.call("workspace.rename", {
      index: w.workspace,
      name: window === null ? name : `${name}:${window}`,
    });
  }
}

type Handler = (st: Step) => Promise<unknown> | unknown;

/** Each command's body, by name. */
const HANDLERS: Record<string, Handler> = {
  "new-session": newSession,
  "new-window": newWindow,
  "split-window": splitWindow,
  "respawn-pane": respawnPane,
  "send-keys": sendKeys,
  "capture-pane": capturePane,
  "list-sessions": listing,
  "list-windows": listing,
  "list-panes": listing,
  "display-message": displayMessage,
  "has-session": (st) => target(st, "session"),
  "kill-pane": killPane,
  "kill-window": (st) => {
    const w = target(st, "window").window;
    const all = st.cmd.flags.has("a") ? w.session.windows.filter((x) => x !== w) : [w];
    return closeWindows(st, all.map((x) => x.workspace));
  },
  "kill-session": (st) =>
    closeWindows(st, target(st, "session").window.session.windows.map((x) => x.workspace)),
  "kill-server": (st) => closeWindows(st, st.model.windows.map((x) => x.workspace)),
  "select-pane": selectPane,
  "select-window": (st) =>
    st.ctx.client.call("workspace.select", { index: target(st, "window").window.workspace }),
  "select-layout": selectLayout,
  "set-option": (st) => setOption(st, false),
  "set-window-option": (st) => setOption(st, true),
  "show-options": (st) => showOptions(st, false),
  "show-window-options": (st) => showOptions(st, true),
  "wait-for": waitFor,
  "attach-session": (st) => attach(st, false),
  "switch-client": (st) => attach(st, true),
  "rename-window": (st) => {
    const w = target(st, "window").window;
    return st.ctx.client.call("workspace.rename", {
      index: w.workspace,
      name: `${w.session.name}:${st.cmd.args[0]}`,
    });
  },
  "rename-session": renameSession,
  "resize-pane": (st) => {
    target(st, "pane");
    unsupported("resize-pane (paneflow sizes panes by layout)");
  },
};

/** Runs one parsed command. */
export async function runCommand(cmd: Command, ctx: RunContext): Promise<void> {
  const model = await loadModel(ctx.client);
  // tmux's server exits with its last session; a host without workspaces answers as none would.
  if (model.sessions.length === 0 && !["new-session", "kill-server", "wait-for"].includes(cmd.spec.name)) {
    throw new TmuxError(`no server running on ${ctx.socket}`);
  }
  const handler = HANDLERS[cmd.spec.name] ?? (() => unsupported(cmd.spec.name));
  await handler({ ctx, cmd, model, current: currentPane(model, ctx) });
}
