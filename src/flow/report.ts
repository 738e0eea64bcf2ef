/**
 * How a flow run looks: live transitions on stderr (a block of progress
 * lines redrawn on a terminal, plain lines in CI) and the final report on
 * stdout (a table, or JSON).
 *
 * @module
 */
import type { FlowPlan } from "./check.ts";
import type { FlowReport, ProgressSink, StepReport } from "./runner.ts";

const enc = new TextEncoder();
const err = (s: string) => Deno.stderr.writeSync(enc.encode(s));

/** A step as progress names it: `review`, or `review@gpu` when its pane is on another machine. */
function label(step: string, host: string | null | undefined): string {
  return host && host !== "local" ? `${step}@${host}` : step;
}

function seconds(ms: number | null): string {
  return ms === null ? "-" : `${(ms / 1000).toFixed(1)}s`;
}

/** Plain transition lines: `[  1.2s] impl: started`. */
export class LineProgress implements ProgressSink {
  #t0 = Date.now();
  constructor(private readonly _quiet = false) {}
  update(r: StepReport, note?: string): void {
    if (this._quiet) return;
    const t = ((Date.now() - this.#t0) / 1000).toFixed(1).padStart(6);
    const what = note ??
      `${r.status}${r.error ? `: ${r.error}` : ""}${
        r.duration_ms !== null ? ` (${seconds(r.duration_ms)})` : ""
      }`;
    err(`[${t}s] ${label(r.step, r.host)}: ${what}\n`);
  }
}

/** One line per step, redrawn in place on a terminal. */
export class LiveProgress implements ProgressSink {
  #rows = new Map<string, string>();
  #labels = new Map<string, string>();
  #drawn = 0;
  #t0 = Date.now();
  constructor(plan: FlowPlan) {
    for (const s of plan.steps) {
      this.#rows.set(s.key, "waiting");
      this.#labels.set(s.key, label(s.key, s.host));
    }
    this.#draw();
  }
  update(r: StepReport, note?: string): void {
    let row: string;
    if (r.duration_ms !== null) {
      row = `${r.status} ${seconds(r.duration_ms)}${r.error ? ` · ${r.error}` : ""}`;
    } else if (r.started_ms === null) row = `${r.status}${r.error ? ` · ${r.error}` : ""}`; // skipped
    else row = `running${note ? ` · ${note}` : ""}`;
    this.#rows.set(r.step, row);
    this.#draw();
  }
  #draw() {
    let cols = 0;
    try {
      cols = Deno.consoleSize().columns;
    } catch { /* not a terminal after all */ }
    // Some terminals report 0 columns: then do not cut.
    if (cols < 20) cols = 1000;
    const width = Math.max(...[...this.#labels.values()].map((k) => k.length));
    let out = this.#drawn ? `\x1b[${this.#drawn}A` : "";
    for (const [k, v] of this.#rows) {
      const icon = v.startsWith("READY")
        ? "✓"
        : v.startsWith("FAILED")
        ? "✗"
        : v.startsWith("SKIPPED")
        ? "-"
        : v.startsWith("running")
        ? "…"
        : " ";
      out += `\x1b[2K${`${icon} ${(this.#labels.get(k) ?? k).padEnd(width)}  ${v}`.slice(0, cols - 1)}\n`;
    }
    const t = ((Date.now() - this.#t0) / 1000).toFixed(1);
    out += `\x1b[2K  ${t}s\n`;
    this.#drawn = this.#rows.size + 1;
    err(out);
  }
}

/** The final report as an aligned table, with the captures below it. */
export function renderReport(report: FlowReport): string {
  // A HOST column when any step ran on another machine.
  const hosts = report.steps.some((s) => s.host !== "local");
  const header = ["STEP", ...(hosts ? ["HOST"] : []), "STATUS", "DURATION", "PANE", "ERROR"];
  const rows = report.steps.map((s) => [
    s.step,
    ...(hosts ? [s.host] : []),
    s.status,
    seconds(s.duration_ms),
    s.surface_id === null ? "-" : String(s.surface_id),
    s.error ?? "",
  ]);
  const widths = header.map((_, i) => Math.max(...[header, ...rows].map((r) => r[i].length)));
  const line = (r: string[]) =>
    r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]))).join("  ").trimEnd();
  const out = [line(header), ...rows.map(line)];
  const verdict = report.cancelled ? "interrupted" : report.ok ? "ok" : "failed";
  out.push("", `flow ${report.flow}: ${verdict} in ${seconds(report.duration_ms)}`);
  for (const [name, value] of Object.entries(report.captures)) {
    if (typeof value === "string") out.push("", `${name}:`, indent(value));
    else for (const [item, v] of Object.entries(value)) out.push("", `${name}.${item}:`, indent(v));
  }
  return out.join("\n");
}

function indent(text: string): string {
  return text.split("\n").map((l) => `  ${l}`).join("\n");
}

/** One line of at most `max` characters: newlines shown as \\n, the rest cut with "…". */
function oneLine(text: string, max = 100): string {
  const flat = text.replaceAll("\n", "\\n");
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The `--dry-run` plan, human-readable. */
export function renderPlan(plan: FlowPlan, launchers: Record<string, string>): string {
  const out = [
    `flow ${plan.name} (layout ${plan.layout}, on_failure ${plan.onFailure}): ${plan.steps.length} steps`,
  ];
  for (const s of plan.steps) {
    out.push("", `${s.key}${s.needs.length ? `  (after ${s.needs.join(", ")})` : ""}`);
    if (s.host !== null) out.push(`  host   ${s.host}`);
    if (s.pane) {
      const cmd = s.pane.agent
        ? `${s.pane.agent}: ${launchers[s.pane.agent] ?? s.pane.agent}`
        : s.pane.command ?? "(shell)";
      out.push(`  pane   ${cmd}  in ${s.pane.cwd}${s.pane.worktree ? `  worktree ${s.pane.worktree}` : ""}`);
      if (s.pane.prompt !== undefined) {
        out.push(`  prompt ${s.submit ? "submit" : "prefill"}: ${oneLine(s.pane.prompt)}`);
      }
    }
    if (s.send) {
      out.push(
        `  send   to ${s.send.target}${s.send.submit ? " (submit)" : ""}: ${oneLine(s.send.text)}`,
      );
    }
    if (s.ready) out.push(`  ready  /${s.ready.pattern}/ within ${s.ready.timeout_secs}s`);
    if (s.capture) {
      const n = s.capture.lines;
      out.push(`  capture ${n} line${n === 1 ? "" : "s"} as \${${s.capture.var}}`);
    }
  }
  return out.join("\n");
}
