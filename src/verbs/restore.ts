import { withClient } from "../client/client.ts";
import { UsageError } from "../errors.ts";
import type { RestoreReport } from "../restore/mod.ts";
import { defineVerb, printJson, printLine } from "./_verb.ts";

/** What `paneflow restore` asks the host: a plan (--list, --dry-run) or a restore. */
export interface RestoreRequest {
  method: "restore.plan" | "restore.run";
  workspaces: string[];
  show: "list" | "commands" | "json";
}

/** Pure: the request for the parsed options. */
export function restoreRequest(
  opts: { list: boolean; "dry-run": boolean; json: boolean },
  args: string[],
): RestoreRequest {
  if (opts.list && opts["dry-run"]) throw new UsageError("--list and --dry-run are exclusive");
  const empty = args.find((a) => a.trim() === "");
  if (empty !== undefined) throw new UsageError("A workspace name is empty");
  return {
    method: opts.list || opts["dry-run"] ? "restore.plan" : "restore.run",
    workspaces: args,
    show: opts.json ? "json" : opts.list ? "list" : "commands",
  };
}

const q = (a: string) => /^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`;

/** The report as lines: per workspace, per pane what ran (list) or what will run (commands). */
export function renderReport(r: RestoreReport, show: "list" | "commands", done: boolean): string[] {
  const out: string[] = [];
  if (r.problem) out.push(`problem: ${r.problem}`);
  if (!r.journal) {
    out.push("Nothing to restore: no journal of a previous host on this socket");
    return out;
  }
  if (!r.workspaces.length) out.push("Nothing to restore: the journal holds no workspace");
  const when = r.written_at ? new Date(r.written_at).toISOString().replace("T", " ").slice(0, 19) : "?";
  if (r.workspaces.length) out.push(`journal ${r.journal} (written ${when} UTC)`);
  for (const ws of r.workspaces) {
    const state = ws.skipped ? `skipped: ${ws.skipped}` : done ? "restored" : `${ws.panes.length} pane(s)`;
    out.push(`workspace "${ws.title}" (${ws.id}): ${state}`);
    for (const p of ws.panes) {
      const who = p.name ?? `#${p.was_surface_id}`;
      const what = show === "list"
        ? `${p.how}${p.agent ? ` ${p.agent}${p.session_id ? ` ${p.session_id}` : ""}` : ""}`
        : p.argv.map(q).join(" ");
      const id = done && p.surface_id !== null ? ` -> pane ${p.surface_id}` : "";
      out.push(
        `  ${who}${id}  ${p.cwd}  ${what}${p.history_lines ? `  (${p.history_lines} lines of history)` : ""}`,
      );
      if (p.problem) out.push(`    problem: ${p.problem}`);
      else if (p.note && show === "list") out.push(`    ${p.note}`);
    }
  }
  return out;
}

export default defineVerb({
  name: "restore",
  usage: "paneflow restore [--list | --dry-run] [--json] [<workspace>...]",
  details: [
    "Brings back the workspaces of the last host on this socket from its journal (after a",
    "stop, a crash or a reboot): titles, pane names, layout, each shell in its last cwd,",
    "agents resumed in their own conversation with the same flags and environment, the",
    "history above a marker line. Default: every workspace; name some to restore only them.",
    "--list shows what the journal holds, per pane; --dry-run what each pane would run.",
    "A pane that cannot come back as it was comes back as a shell with the reason. See docs/restore.md.",
  ].join("\n"),
  options: {
    list: { type: "boolean", description: "Show what the journal holds, per pane" },
    "dry-run": { type: "boolean", description: "Show what each pane would run, restore nothing" },
    json: { type: "boolean", description: "Print the host's reply as JSON" },
  },
  positionals: [{ name: "workspace", optional: true, rest: true }],
  run({ opts, args }) {
    const req = restoreRequest(opts, args);
    return withClient(async (client) => {
      const r: RestoreReport = await client.call(req.method, { workspaces: req.workspaces });
      if (req.show === "json") printJson(r);
      else for (const line of renderReport(r, req.show, req.method === "restore.run")) printLine(line);
      return 0;
    });
  },
});
