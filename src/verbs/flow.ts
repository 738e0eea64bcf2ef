import { Client } from "../client/client.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { socketPath } from "../paths.ts";
import { ExitCode } from "../spec/codes.ts";
import type { LocatedIssue } from "../spec/workspace.ts";
import type { Config } from "../spec/config.ts";
import type { FlowPlan } from "../flow/check.ts";
import type { FlowHosts } from "../flow/connections.ts";
import type { Locator } from "../toml_locate.ts";
import type { EmbeddedHost } from "./_flow_embedded.ts";
import { defineVerb, printJson } from "./_verb.ts";

/** Lines of each pane printed when an embedded host is torn down. */
const FINAL_LINES = 15;

export default defineVerb({
  name: "flow",
  usage: "paneflow flow <run|validate> <file> [--dry-run] [--json] [--keep-host] [--no-embedded]",
  details: [
    "run: steps start as soon as their needs are READY. Live transitions go to stderr, the",
    "report to stdout. With no host answering, an embedded host runs in this process on a",
    "private socket and is torn down at the end (--keep-host starts a detached one instead).",
    'A step with host = "<name>" (a host of the config) runs on that machine\'s host over ssh;',
    "--embedded and the rest apply to this machine's part of the flow only.",
    "Exit: 0 all READY, 1 a step failed, 2 invalid flow, 4 a ready timeout, 130 Ctrl-C.",
    "validate: checks the file and prints every problem (file:line:column: key: message).",
  ].join("\n"),
  options: {
    "dry-run": {
      type: "boolean",
      description: "Validate, check the write gate and print the plan; run nothing",
    },
    json: { type: "boolean", description: "Print the report (or plan) as JSON; no progress on stderr" },
    "keep-host": { type: "boolean", description: "With no host, start a detached one and leave it running" },
    "no-embedded": { type: "boolean", description: "With no host, fail instead of embedding one" },
    embedded: { type: "boolean", description: "Always run an embedded host, even when one answers" },
  },
  positionals: [{ name: "run|validate" }, { name: "file" }],
  async run({ opts, args }) {
    const [action, file] = args;
    if (action !== "run" && action !== "validate") {
      throw new UsageError(`Unknown flow action "${action}"; use run or validate`);
    }
    const checked = await checkFile(file);
    if (!("plan" in checked)) return reportIssues(checked, file, opts.json);
    const { plan, locate, config, table } = checked;
    // Every other machine the flow names answers (and its write gate is open) before anything
    // starts; `run` keeps those connections for the run.
    const { connectHosts } = await import("../flow/connections.ts");
    const remote = await connectHosts(plan, {
      open: action === "run" && !opts["dry-run"],
      gate: action === "run",
      file,
      locate,
    });
    if ("issues" in remote) return reportIssues(remote.issues, file, opts.json);
    const hosts = remote.hosts;
    if (action === "validate") {
      if (opts.json) {
        printJson({ ok: true, flow: plan.name, steps: plan.steps.map((s) => s.key), hosts: plan.hosts });
      } else console.log(`${file}: ok (${plan.steps.length} step${plan.steps.length === 1 ? "" : "s"})`);
      return 0;
    }
    if (opts.embedded && (opts["keep-host"] || opts["no-embedded"])) {
      hosts.close();
      throw new UsageError("Option --embedded excludes --keep-host and --no-embedded");
    }
    // A flow whose every step runs on other machines needs no host here.
    const local = plan.steps.some((s) => s.host === null);
    const existing = opts.embedded || !local ? null : await Client.tryConnect(socketPath());
    await checkWriteGate(plan, { existing, config, hosts });
    if (opts["dry-run"]) {
      existing?.close();
      await printPlan(plan, table, opts.json);
      return 0;
    }
    const here = local ? await localHost(existing, { config, hosts, opts }) : null;
    return await runAndReport(plan, { hosts, here, json: opts.json });
  },
});

/** What `paneflow flow` was given, as the verb's options parse it. */
interface FlowOptions {
  "dry-run": boolean;
  json: boolean;
  "keep-host": boolean;
  "no-embedded": boolean;
  embedded: boolean;
}

/** A valid flow file: its plan, where its keys are, the config it was checked against and its launchers. */
interface CheckedFlow {
  plan: FlowPlan;
  locate: Locator;
  config: Config;
  table: Record<string, string>;
}

/**
 * Reads and checks a flow file: its problems, or the plan. Agents on PATH
 * and worktree branches are checked as `up --dry-run` checks them.
 */
async function checkFile(file: string): Promise<CheckedFlow | LocatedIssue[]> {
  let text: string;
  try {
    text = await Deno.readTextFile(file);
  } catch (e) {
    const why = e instanceof Deno.errors.NotFound ? "no such file" : (e as Error).message;
    throw new UsageError(`Cannot read flow file "${file}": ${why}`, { cause: e });
  }
  const { parseFlowToml, FlowSpecError } = await import("../flow/check.ts");
  const { loadConfig } = await import("../spec/config.ts");
  const { launchers } = await import("../agents/launchers.ts");
  const config = await loadConfig().catch((e) => {
    throw new CliFailure((e as Error).message, undefined, { cause: e });
  });
  const table = launchers(config);
  try {
    const { planPanes } = await import("../up/plan.ts");
    const { paneBaseEnv } = await import("../core/pane/env.ts");
    const baseEnv = paneBaseEnv(config);
    const { plan, locate } = await parseFlowToml(text, {
      path: file,
      agents: Object.keys(table),
      hosts: Object.keys(config.hosts),
      checkPane: async (ws) => (await planPanes(ws, { launchers: table, baseEnv })).issues,
    });
    return { plan, locate, config, table };
  } catch (e) {
    if (e instanceof FlowSpecError) return e.issues;
    throw e;
  }
}

/** Prints a flow's problems (and with --json, them as JSON); the exit code of an invalid flow. */
async function reportIssues(issues: LocatedIssue[], file: string, json: boolean): Promise<number> {
  const { formatIssue } = await import("../up/check.ts");
  for (const i of issues) console.error(`paneflow: ${formatIssue(i)}`);
  console.error(
    `paneflow: ${issues.length} problem${issues.length === 1 ? "" : "s"} in ${file}; nothing ran`,
  );
  if (json) printJson({ ok: false, errors: issues });
  return ExitCode.Usage;
}

/**
 * The write gate is checked before anything is created, also under
 * --dry-run: a flow that writes into this machine's panes needs it open on
 * the host that answers, or on the one it would start.
 */
async function checkWriteGate(
  plan: FlowPlan,
  { existing, config, hosts }: { existing: Client | null; config: Config; hosts: FlowHosts },
): Promise<void> {
  const { LOCAL, writeHosts } = await import("../flow/connections.ts");
  if (!writeHosts(plan).includes(LOCAL)) return;
  const scripting = existing
    ? (await existing.call("system.capabilities")).scripting
    : Deno.env.get("PANEFLOW_IPC_SCRIPTING") === "1" || config.ai_unrestricted;
  if (scripting) return;
  existing?.close();
  hosts.close();
  throw new CliFailure(
    `The flow writes into panes (send or submit) but the host's write gate is closed: start the host with PANEFLOW_IPC_SCRIPTING=1 or set "ai_unrestricted": true in the config`,
  );
}

/** `--dry-run`: the plan, as text or JSON. */
async function printPlan(plan: FlowPlan, table: Record<string, string>, json: boolean): Promise<void> {
  const { renderPlan } = await import("../flow/report.ts");
  if (!json) return console.log(renderPlan(plan, table));
  printJson({
    dry_run: true,
    flow: plan.name,
    layout: plan.layout,
    on_failure: plan.onFailure,
    // `host` only on steps that run on another machine (the plan is otherwise as before).
    steps: plan.steps.map(({ host, ...s }) => host === null ? s : { ...s, host }),
  });
}

/** The host this machine's steps run on: its socket, and the embedded host and its directory if one was started. */
interface LocalHost {
  path: string;
  embedded: EmbeddedHost | null;
  tempDir: string | null;
}

/**
 * The host for this machine's steps: the one that answers; with none, a
 * detached one (--keep-host), none at all (--no-embedded fails), or an
 * embedded one in this process on a private socket.
 */
async function localHost(
  existing: Client | null,
  { config, hosts, opts }: { config: Config; hosts: FlowHosts; opts: FlowOptions },
): Promise<LocalHost> {
  const path = socketPath();
  if (existing) {
    existing.close();
    return { path, embedded: null, tempDir: null };
  }
  if (opts["keep-host"]) {
    const { startDetached } = await import("../client/autostart.ts");
    await startDetached(path, { shared: true });
    if (!opts.json) {
      console.error(`paneflow: no host answered; started one on ${path} that keeps running after the flow`);
    }
    return { path, embedded: null, tempDir: null };
  }
  if (opts["no-embedded"]) {
    hosts.close();
    throw new CliFailure(
      `Instance unreachable: no paneflow host answers on ${path}; start one with: paneflow serve --detach`,
    );
  }
  const { startEmbedded } = await import("./_flow_embedded.ts");
  const embedded = await startEmbedded(config);
  if (!opts.json) {
    const why = opts.embedded ? "--embedded" : "no host answered";
    console.error(`paneflow: ${why}; running an embedded host on ${embedded.socketPath}`);
  }
  return { path: embedded.socketPath, embedded, tempDir: embedded.dir };
}

/**
 * Runs the flow with live progress on stderr and prints the report; the
 * run's exit code. A first Ctrl-C stops the run and still reports; a second
 * exits at once.
 */
async function runAndReport(
  plan: FlowPlan,
  { hosts, here, json }: { hosts: FlowHosts; here: LocalHost | null; json: boolean },
): Promise<number> {
  const { runFlow, exitCodeOf } = await import("../flow/runner.ts");
  const { LineProgress, LiveProgress, renderReport } = await import("../flow/report.ts");
  const { LOCAL } = await import("../flow/connections.ts");
  const abort = new AbortController();
  const onSigint = () => {
    if (!abort.signal.aborted) return abort.abort();
    // A second Ctrl-C while the first one winds down: leave at once. The
    // embedded host's panes get SIGHUP from the kernel as its PTYs close.
    console.error("paneflow: interrupted again; exiting without the report");
    if (here?.tempDir) Deno.removeSync(here.tempDir, { recursive: true });
    Deno.exit(130);
  };
  Deno.addSignalListener("SIGINT", onSigint);
  const progress = json
    ? new LineProgress(true)
    : Deno.stderr.isTerminal()
    ? new LiveProgress(plan)
    : new LineProgress();
  const embedded = here?.embedded ?? null;
  try {
    if (here) {
      hosts.setLocal(here.path);
      const failures = await hosts.open([LOCAL]);
      if (failures.size) throw new CliFailure(failures.get(LOCAL)!);
    }
    const report = await runFlow(plan, { hosts, progress, signal: abort.signal });
    const finalScreens = embedded && here
      ? await readFinalScreens(here.path, report.steps.filter((s) => s.host === LOCAL))
      : undefined;
    if (json) {
      printJson({
        ...report,
        exit_code: exitCodeOf(report),
        host: embedded ? "embedded" : here?.path ?? null,
        final_screens: finalScreens,
      });
      return exitCodeOf(report);
    }
    console.log(renderReport(report));
    for (const [step, screen] of Object.entries(finalScreens ?? {})) {
      console.log(`\n--- ${step}: last lines of its pane ---\n${screen}`);
    }
    if (report.cancelled) {
      console.error(
        embedded
          ? "paneflow: interrupted; the embedded host and its panes stop with this process (--keep-host keeps them)"
          : "paneflow: interrupted; panes the flow created were left as they are",
      );
    }
    return exitCodeOf(report);
  } finally {
    hosts.close();
    Deno.removeSignalListener("SIGINT", onSigint);
    if (embedded) await embedded.stop();
    if (here?.tempDir) await Deno.remove(here.tempDir, { recursive: true }).catch(() => {});
  }
}

/** The last lines of each step's pane on the embedded host, before it stops. */
async function readFinalScreens(
  path: string,
  steps: { step: string; surface_id: number | null }[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const client = await Client.connect(path);
  try {
    const seen = new Set<number>();
    for (const s of steps) {
      if (s.surface_id === null || seen.has(s.surface_id)) continue;
      seen.add(s.surface_id);
      try {
        const r = await client.call("surface.read", {
          surface_id: s.surface_id,
          lines: FINAL_LINES,
          fenced: false,
        });
        out[s.step] = r.text;
      } catch { /* closed */ }
    }
  } finally {
    client.close();
  }
  return out;
}
