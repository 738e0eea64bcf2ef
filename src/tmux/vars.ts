/**
 * The format variables of a pane, window and session (docs/tmux.md lists
 * them), looked up lazily: `#{pane_tty}` reads /proc only when asked.
 *
 * @module
 */
import type { Lookup } from "./format.ts";
import type { ShimState } from "./context.ts";
import type { TPane } from "./model.ts";

function basename(p: string): string {
  return p.slice(p.lastIndexOf("/") + 1);
}

function tty(pid: number): string {
  try {
    const link = Deno.readLinkSync(`/proc/${pid}/fd/0`);
    return link.startsWith("/dev/") ? link : "";
  } catch {
    return "";
  }
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "";
  }
}

/** The variables of `p` (and its window and session). */
export function paneLookup(p: TPane, state: ShimState): Lookup {
  const w = p.window;
  const s = w.session;
  const b = (v: boolean) => (v ? "1" : "0");
  const table: Record<string, () => string> = {
    pane_id: () => `%${p.id}`,
    pane_index: () => String(p.index),
    pane_pid: () => String(p.info.pid),
    pane_tty: () => tty(p.info.pid),
    pane_current_command: () => basename(p.info.argv[0] ?? ""),
    pane_start_command: () => p.info.argv.join(" "),
    pane_current_path: () => p.info.cwd,
    pane_title: () => state.titles[String(p.id)] ?? (p.info.title || hostname()),
    pane_width: () => String(p.info.cols),
    pane_height: () => String(p.info.rows),
    pane_active: () => b(p.active),
    pane_dead: () => b(p.info.exited),
    pane_dead_status: () => (p.info.exited ? String(p.info.exit_code ?? "") : ""),
    pane_in_mode: () => "0",
    pane_synchronized: () => "0",
    pane_marked: () => "0",
    window_id: () => `@${w.id}`,
    window_index: () => String(w.index),
    window_name: () => w.name,
    window_panes: () => String(w.panes.length),
    window_active: () => b(w.active),
    window_width: () => String(w.cols),
    window_height: () => String(w.rows),
    window_zoomed_flag: () => "0",
    window_flags: () => (w.active ? "*" : ""),
    session_name: () => s.name,
    session_id: () => `$${s.id}`,
    session_windows: () => String(s.windows.length),
    session_attached: () => b(s.attached),
    host: () => hostname(),
    host_short: () => hostname().split(".")[0],
    pid: () => "",
    version: () => "3.3a",
  };
  return (name) => table[name]?.();
}
