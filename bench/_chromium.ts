/**
 * Chromium's CPU time, read from /proc: every process of one browser (found
 * by its `--user-data-dir`, then its descendants), by process type
 * (`browser`, `renderer`, `gpu-process`, `zygote`, `utility`) and, for the
 * renderers, by thread name (`CrRendererMain` is the page's JavaScript,
 * style, layout and paint recording; `Compositor` and `CompositorTileW` are
 * compositing and software rasterization). For bench/web.ts.
 *
 * @module
 */

interface Proc {
  pid: number;
  ppid: number;
  type: string;
}

function readProcs(): Proc[] {
  const out: Proc[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      // A zygote's children rewrite their command line as one space-separated string.
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`);
      const type = /--type=(\S+)/.exec(cmd)?.[1] ?? "browser";
      out.push({ pid: Number(e.name), ppid, type: cmd.includes("chrom") ? type : "" });
    } catch { /* gone */ }
  }
  return out;
}

/** The processes of the browser started with `--user-data-dir=<profile>`. */
export function chromiumProcs(profile: string): Proc[] {
  const procs = readProcs();
  const roots = procs.filter((p) => {
    try {
      const cmd = Deno.readTextFileSync(`/proc/${p.pid}/cmdline`);
      return cmd.includes(`--user-data-dir=${profile}`) && !cmd.includes("--type=");
    } catch {
      return false;
    }
  });
  const inTree = new Set(roots.map((p) => p.pid));
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) {
      if (!inTree.has(p.pid) && inTree.has(p.ppid) && p.type) {
        inTree.add(p.pid);
        grew = true;
      }
    }
  }
  return procs.filter((p) => inTree.has(p.pid));
}

function ticks(path: string): number {
  const stat = Deno.readTextFileSync(path);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return Number(fields[11]) + Number(fields[12]);
}

/** CPU seconds so far: by process type, and by renderer thread name. */
export function chromiumCpu(profile: string): { byType: Map<string, number>; byThread: Map<string, number> } {
  const byType = new Map<string, number>();
  const byThread = new Map<string, number>();
  for (const p of chromiumProcs(profile)) {
    try {
      byType.set(p.type, (byType.get(p.type) ?? 0) + ticks(`/proc/${p.pid}/stat`) / 100);
      if (p.type !== "renderer") continue;
      for (const t of Deno.readDirSync(`/proc/${p.pid}/task`)) {
        const stat = Deno.readTextFileSync(`/proc/${p.pid}/task/${t.name}/stat`);
        const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")).replace(/\d+$/, "");
        byThread.set(name, (byThread.get(name) ?? 0) + ticks(`/proc/${p.pid}/task/${t.name}/stat`) / 100);
      }
    } catch { /* gone */ }
  }
  return { byType, byThread };
}

/** What `chromiumCpu` grew by over `seconds`, as percent of one core, largest first. */
export function cpuDelta(
  a: Map<string, number>,
  b: Map<string, number>,
  seconds: number,
): Record<string, number> {
  const out: [string, number][] = [];
  for (const [k, v] of b) out.push([k, +(((v - (a.get(k) ?? 0)) / seconds) * 100).toFixed(1)]);
  out.sort((x, y) => y[1] - x[1]);
  return Object.fromEntries(out.filter(([, v]) => v > 0));
}
