import { defineVerb, printJson, printTable } from "./_verb.ts";
import type { LocatedIssue } from "../spec/workspace.ts";
import type { PanePlan } from "../up/plan.ts";
import type { Result } from "../spec/results.ts";
import type { ParsedWorkspace } from "../up/check.ts";
import type { Config } from "../spec/config.ts";

type UpResult = Result<"workspace.up">;

function quote(s: string, max = 60): string {
  const one = s.replace(/\s*\n\s*/g, " ");
  return JSON.stringify(one.length > max ? `${one.slice(0, max - 1)}…` : one);
}

/** The human form of a dry-run plan. */
export function renderPlan(
  file: string,
  ws: { name: string; layout: string; port_base: number },
  panes: PanePlan[],
): string {
  const lines = [
    `Dry run of ${file}: workspace ${JSON.stringify(ws.name)}, layout ${ws.layout}, ${panes.length} pane${
      panes.length === 1 ? "" : "s"
    }; nothing was created`,
  ];
  for (const p of panes) {
    lines.push("", `[${p.index}] ${p.name ?? "(unnamed)"}${p.focus ? " (focus)" : ""}`);
    const row = (k: string, v: string) => lines.push(`    ${k.padEnd(9)} ${v}`);
    row("runs", p.agent !== null ? `${p.command}  (agent ${p.agent})` : p.command ?? "an interactive shell");
    row("cwd", p.cwd);
    if (p.worktree) {
      const w = p.worktree;
      const how = w.action === "create_branch"
        ? `new branch "${w.branch}" from HEAD (${w.from})`
        : w.action === "track_remote"
        ? `new branch "${w.branch}" tracking ${w.from}`
        : w.action === "checkout_branch"
        ? `existing branch "${w.branch}"`
        : `existing worktree of branch "${w.branch}", reused`;
      row("worktree", `${how}; ${w.teardown === "auto" ? "removed on close when clean" : "kept on close"}`);
      if (w.copy_env) {
        row("copy_env", w.env_files.length ? w.env_files.join(", ") : "no gitignored .env* files");
      }
    }
    if (p.setup !== null) row("setup", `${p.setup}  (timeout ${p.setup_timeout_secs}s; a failure warns)`);
    for (const [k, v] of Object.entries(p.env)) row("env", `${k}=${v}`);
    if (p.port !== null) row("port", String(p.port));
    if (p.prompt !== null) row("prompt", `${quote(p.prompt)} (typed once ready, not submitted)`);
  }
  return lines.join("\n");
}

/** The human form of what `up` did. */
function printResult(r: UpResult): void {
  const created = r.created.length;
  const reused = r.reused.length;
  const parts = [`${created} pane${created === 1 ? "" : "s"} created`];
  if (reused) parts.push(`${reused} reused (still running; matched by name)`);
  console.log(`Workspace ${JSON.stringify(r.title)} is up (index ${r.index}): ${parts.join(", ")}`);
  printTable(
    ["#", "SURFACE", "NAME", "STATE", "PORT", "RUNS", "CWD"],
    r.panes.map((p) => [
      p.index,
      p.surface_id,
      p.name,
      p.reused ? "reused" : "created",
      p.port,
      p.agent !== null ? `${p.agent}: ${p.command}` : p.command ?? "shell",
      p.cwd,
    ]),
  );
  for (const p of r.panes) {
    if (p.prompt === "pending") {
      console.log(`Prompt for pane ${p.surface_id} is typed once the program is ready; not submitted.`);
    }
  }
}

export default defineVerb({
  name: "up",
  usage: "paneflow up <file> [--dry-run] [--json] [--no-autostart]",
  details: [
    "Validates the whole spec first (every problem is reported with its file, line and key;",
    "nothing is created unless all of it is valid), then creates the workspace, its worktrees",
    "and panes. Re-running up reuses panes that still run, matched by name. Starts a detached",
    "host first when none answers (unless --no-autostart). Exit 2 when the spec is invalid.",
  ].join("\n"),
  options: {
    "dry-run": {
      type: "boolean",
      description: "Validate and print the resolved plan (commands, worktrees, ports); touch nothing",
    },
    json: { type: "boolean", description: "Print one JSON document" },
    "no-autostart": { type: "boolean", description: "Fail instead of starting a host" },
  },
  positionals: [{ name: "file" }],
  async run({ opts, args }) {
    const file = args[0];
    const { CliFailure, RpcError } = await import("../errors.ts");
    const text = await readWorkspaceFile(file);
    const { locateIssues, parseWorkspaceToml, WorkspaceSpecError } = await import("../up/check.ts");
    const fail = (issues: LocatedIssue[]) => reportIssues(issues, file, opts.json);

    const { loadConfig } = await import("../spec/config.ts");
    const { launchers } = await import("../agents/launchers.ts");
    let config: Config | null = null;
    try {
      config = await loadConfig();
    } catch (e) {
      // The host reads its own config; a dry run needs this one.
      if (opts["dry-run"]) throw new CliFailure((e as Error).message, undefined, { cause: e });
    }
    const table = config ? launchers(config) : null;

    let parsed;
    try {
      parsed = await parseWorkspaceToml(text, { path: file, agents: table ? Object.keys(table) : undefined });
    } catch (e) {
      if (e instanceof WorkspaceSpecError) return fail(e.issues);
      throw e;
    }
    if (opts["dry-run"]) {
      return await dryRun(parsed, { file, config: config!, table: table!, json: opts.json });
    }

    const { connectOrStart } = await import("../client/autostart.ts");
    const client = await connectOrStart(!opts["no-autostart"]);
    let result: UpResult;
    try {
      result = await client.call("workspace.up", parsed.spec);
    } catch (e) {
      const issues = e instanceof RpcError ? e.data?.issues : undefined;
      if (Array.isArray(issues)) return fail(locateIssues(issues, file, parsed.locate));
      throw e;
    } finally {
      client.close();
    }
    if (opts.json) printJson(result);
    else printResult(result);
    return 0;
  },
});

/** A workspace file's text; a file that cannot be read is a usage error. */
async function readWorkspaceFile(file: string): Promise<string> {
  try {
    return await Deno.readTextFile(file);
  } catch (e) {
    const { UsageError } = await import("../errors.ts");
    const why = e instanceof Deno.errors.NotFound
      ? "no such file"
      : e instanceof Deno.errors.IsADirectory
      ? "it is a directory"
      : (e as Error).message;
    throw new UsageError(`Cannot read workspace file "${file}": ${why}`, { cause: e });
  }
}

/** Prints a spec's problems (and with --json, them as JSON); the exit code of an invalid spec. */
async function reportIssues(issues: LocatedIssue[], file: string, json: boolean): Promise<number> {
  const { formatIssue } = await import("../up/check.ts");
  for (const i of issues) console.error(`paneflow: ${formatIssue(i)}`);
  const n = issues.length;
  console.error(`paneflow: ${n} problem${n === 1 ? "" : "s"} in ${file}; nothing was created`);
  if (json) printJson({ ok: false, errors: issues });
  return 2;
}

/** `--dry-run`: plans the panes as the host would and prints the plan; touches nothing. */
async function dryRun(
  parsed: ParsedWorkspace,
  { file, config, table, json }: {
    file: string;
    config: Config;
    table: Record<string, string>;
    json: boolean;
  },
): Promise<number> {
  const { planPanes } = await import("../up/plan.ts");
  const { paneBaseEnv } = await import("../core/pane/env.ts");
  const { locateIssues } = await import("../up/check.ts");
  const plan = await planPanes(parsed.workspace, { launchers: table, baseEnv: paneBaseEnv(config) });
  if (plan.issues.length) return reportIssues(locateIssues(plan.issues, file, parsed.locate), file, json);
  const ws = parsed.workspace;
  if (json) {
    printJson({
      dry_run: true,
      name: ws.name,
      layout: ws.layout,
      port_base: ws.port_base,
      panes: plan.panes,
    });
  } else {
    console.log(renderPlan(file, ws, plan.panes));
  }
  return 0;
}
