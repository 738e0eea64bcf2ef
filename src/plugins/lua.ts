/**
 * The Lua 5.4 runtime (npm `wasmoon`: the reference interpreter compiled to
 * WebAssembly), sandboxed as ptywright's mlua host is:
 *
 * - the standard library is only `table`, `string`, `math` and `utf8` plus
 *   the safe base functions: no `io`, `os`, `require`/`package`, `debug`,
 *   `dofile`/`loadfile`, `string.dump`, and `load` accepts text only (no
 *   bytecode);
 * - every call runs under an instruction budget (a count hook every 10,000
 *   instructions), a wall-clock limit checked at the same hook, and a cap
 *   on the VM's memory;
 * - the global `ptywright` holds the action and matcher constructors of the
 *   permissions the manifest declares, and nothing else: no callback reaches
 *   the host.
 *
 * The VM runs on the host's thread; the budget bounds how long a call can
 * hold it (5,000,000 instructions take ~0.2 s).
 *
 * @module
 */
import { LuaEventMasks, LuaFactory } from "wasmoon";
import type { LuaEngine } from "wasmoon";
import type { Manifest } from "./manifest.ts";
import { PluginFailure } from "./errors.ts";
import type { Budget, PluginRuntime } from "./types.ts";

const HOOK_EVERY = 10_000;
let factory: LuaFactory | null = null;

/** Removes everything outside table/string/math/utf8 and the safe base functions. */
const SANDBOX = `
io, os, package, debug, coroutine, require, dofile, loadfile, collectgarbage, print = nil
string.dump = nil
local raw_load = load
load = function(chunk, name, _mode, env)
  return raw_load(chunk, name, "t", env or _G)
end
`;

/**
 * The host API: tag constructors, present per declared permission (as ptywright's
 * https://github.com/utensils/ptywright/blob/main/src/lua_plugin.rs).
 */
function hostApi(perms: Set<string>): string {
  const parts = ["ptywright = {}"];
  if (perms.has("input.write") || perms.has("session.kill")) parts.push("ptywright.action = {}");
  if (perms.has("input.write")) {
    parts.push(`
local A = ptywright.action
function A.text(s) return {type="text", value=s} end
function A.paste(s) return {type="paste", value=s} end
function A.bracketed_paste(s) return {type="bracketed_paste", value=s} end
function A.key(k) return {type="key", value=k} end
function A.interrupt() return {type="interrupt"} end
function A.eof() return {type="eof"} end
function A.mark_transcript(label) return {type="mark_transcript", value={label=label}} end`);
  }
  if (perms.has("session.kill")) {
    parts.push(`
function ptywright.action.kill() return {type="kill"} end
function ptywright.action.signal(name) return {type="signal", value=name} end`);
  }
  if (perms.has("matcher.wait")) {
    parts.push(`
ptywright.matcher = {}
local M = ptywright.matcher
function M.contains_text(s) return {type="contains_text", value=s} end
function M.screen_regex(s) return {type="screen_regex", value=s} end
function M.transcript_contains(s) return {type="transcript_contains", value=s} end
function M.transcript_regex(s) return {type="transcript_regex", value=s} end
function M.screen_stable(ms) return {type="screen_stable", value={min_ms=ms}} end
function M.process_exited() return {type="process_exited"} end
function M.any(list) return {type="any", value=list} end
function M.all(list) return {type="all", value=list} end`);
  }
  return parts.join("\n");
}

/** A Lua plugin instance: one VM holding the entrypoint's export table. */
export class LuaRuntime implements PluginRuntime {
  #engine: LuaEngine;
  #name: string;
  #budget: Budget;
  #used = 0;
  #deadline = 0;
  #hook: number;
  readonly exports: string[];

  private constructor(engine: LuaEngine, name: string, budget: Budget) {
    this.#engine = engine;
    this.#name = name;
    this.#budget = budget;
    const g = engine.global;
    const lua = g.lua;
    this.#hook = lua.module.addFunction((L: number) => {
      this.#used += HOOK_EVERY;
      let why: string | null = null;
      if (this.#used > this.#budget.instructions) why = "Lua plugin instruction limit exceeded";
      else if (Date.now() > this.#deadline) why = "Lua plugin wall-clock limit exceeded";
      if (why) {
        lua.lua_pushstring(L, why);
        lua.lua_error(L);
      }
    }, "vii");
    lua.lua_sethook(g.address, this.#hook, LuaEventMasks.Count, HOOK_EVERY);
    this.exports = [];
  }

  /** Starts a VM, applies the sandbox and runs the entrypoint, which must return a table of functions. */
  static async create(manifest: Manifest, source: string, budget: Budget): Promise<LuaRuntime> {
    factory ??= new LuaFactory();
    const engine = await factory.createEngine({
      openStandardLibs: true,
      injectObjects: false,
      enableProxy: false,
      traceAllocations: true,
    });
    engine.global.setMemoryMax(budget.memoryBytes);
    const rt = new LuaRuntime(engine, manifest.name, budget);
    try {
      rt.#run(() => {
        engine.doStringSync(SANDBOX);
        engine.doStringSync(hostApi(new Set(manifest.permissions)));
        engine.global.set("__pf_src", source);
        engine.doStringSync(`
local chunk, err = load(__pf_src, "=" .. ${JSON.stringify(manifest.entrypoint ?? "main.lua")}, "t")
__pf_src = nil
if not chunk then error(err, 0) end
local exports = chunk()
if type(exports) ~= "table" then error("the entrypoint must return a table of functions", 0) end
__pf_exports = exports
__pf_names = {}
for k, v in pairs(exports) do
  if type(k) == "string" and type(v) == "function" then __pf_names[#__pf_names + 1] = k end
end
table.sort(__pf_names)
function __pf_call(name, arg) return __pf_exports[name](arg) end`);
      });
      const names = engine.global.get("__pf_names");
      rt.exports.push(...(Array.isArray(names) ? names : []));
    } catch (e) {
      rt.close();
      throw e;
    }
    return rt;
  }

  #run<T>(f: () => T): T {
    this.#used = 0;
    this.#deadline = Date.now() + this.#budget.wallMs;
    try {
      return f();
    } catch (e) {
      const msg = (e instanceof Error ? e.message : String(e)).replace(/^Error: /, "");
      throw new PluginFailure(`lua plugin \`${this.#name}\` failed: ${msg}`, { cause: e });
    }
  }

  call(fn: string, arg: unknown): unknown {
    if (!this.exports.includes(fn)) {
      throw new PluginFailure(`lua plugin \`${this.#name}\` failed: no exported function \`${fn}\``);
    }
    return this.#run(() => {
      // Called on the main thread, whose count hook holds the budget (wasmoon's
      // function wrappers run on a thread of their own without it).
      const g = this.#engine.global;
      const lua = g.lua;
      const L = g.address;
      const top = lua.lua_gettop(L);
      try {
        lua.lua_getglobal(L, "__pf_call");
        g.pushValue(fn);
        g.pushValue(arg ?? {});
        const status = lua.lua_pcallk(L, 2, 1, 0, 0, null);
        const value = g.getValue(-1);
        if (status !== 0) throw new Error(typeof value === "string" ? value : String(value));
        return value;
      } finally {
        lua.lua_settop(L, top);
      }
    });
  }

  close(): void {
    try {
      this.#engine.global.close();
      this.#engine.global.lua.module.removeFunction(this.#hook);
    } catch {
      // already closed
    }
  }
}
