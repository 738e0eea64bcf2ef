/**
 * V8 CPU profiles (the `Profiler` domain's result): self time by category
 * and by function, for bench/profile.ts (a pane worker) and
 * bench/host_profile.ts (the host's main thread).
 *
 * @module
 */

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
/** A V8 CPU profile. */
export interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

function category(fn: string, url: string): string {
  if (fn === "(garbage collector)") return "GC";
  if (fn === "(idle)") return "idle";
  if (fn === "(program)") return "V8/runtime (program)";
  if (url.includes("@xterm")) return "xterm parse + buffer";
  if (url.includes("scrollback.ts")) return "our scrollback compaction";
  if (url.includes("screen.ts")) return "change detection / snapshots";
  if (/\/server\/pane\/(worker|ops|panes|drain|terminal|outbox|protocol|views)\.ts/.test(url)) {
    return "worker code + message passing";
  }
  if (url.includes("node-pty") || url.startsWith("node:") || url.includes("ext:")) {
    return "pty reads (node-pty, Deno node compat)";
  }
  return "other";
}

/** Self time (ms) by category and by function. */
export function summarize(p: Profile) {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const dt = (p.timeDeltas[i + 1] ?? 0) / 1000;
    self.set(p.samples[i], (self.get(p.samples[i]) ?? 0) + dt);
  }
  const cats = new Map<string, number>();
  const fns = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    const cat = category(functionName, url);
    cats.set(cat, (cats.get(cat) ?? 0) + ms);
    if (cat !== "idle") total += ms;
    const file = url.replace(/^.*\/(node_modules\/\.deno\/)?/, "").replace(/^.*@xterm.*\//, "xterm/");
    const key = `${functionName || "(anonymous)"} ${file}:${lineNumber + 1}`;
    fns.set(key, (fns.get(key) ?? 0) + ms);
  }
  return { cats, fns, total };
}
