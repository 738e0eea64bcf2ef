/**
 * opencode's hooks are plugins: JS modules it loads from `plugins/` in its
 * config dirs (`$OPENCODE_CONFIG_DIR`, `$XDG_CONFIG_HOME/opencode` or
 * `~/.config/opencode`, `.opencode/` in a project) or from its config's
 * `plugin` list. paneflow's plugin (written by `paneflow hooks setup --agent
 * opencode`, or per launch for panes `up` and flows start) listens to
 * opencode 1.18's plugin hooks and bus events and runs `paneflow ai-hook
 * --tool opencode <Event>` with a Claude-shaped JSON payload on stdin, one at
 * a time in order, so the frames are the same `ai.*` frames the other agents
 * post:
 *
 * | opencode                                  | ai-hook event     | frame                                   |
 * | ----------------------------------------- | ----------------- | --------------------------------------- |
 * | `session.created` (at the first prompt)   | SessionStart      | `ai.session_start`                      |
 * | `chat.message` (a user prompt)            | UserPromptSubmit  | `ai.prompt_submit`                      |
 * | `tool.execute.before` / `.after`          | Pre/PostToolUse   | `ai.tool_use`                           |
 * | `permission.asked` (`permission.updated`) | PermissionRequest | `ai.notification` (`bash: <command>`)   |
 * | `session.idle` after a turn               | Stop              | `ai.stop` (the reply as `last_result`)  |
 * | `session.error` (not an abort)            | StopFailure       | `ai.stop` with the error → errored      |
 *
 * An interrupt (`session.error` `MessageAbortedError`) and a rejected
 * permission (`permission.replied` `reject`) end in `session.idle` too: the
 * plugin sends no Stop for those turns, and the screen rule `interrupted`
 * says what happened. Sub-agent sessions (with a parent) are ignored. The
 * plugin does nothing outside a paneflow pane (no `PANEFLOW_SURFACE_ID`).
 *
 * Pure: `src/verbs/hooks.ts` and `per_launch.ts` do the I/O.
 *
 * @module
 */

/** The first line of every plugin file paneflow writes; a file without it is the user's. */
export const OPENCODE_PLUGIN_MARKER = "// paneflow-managed";

/** The ai-hook events the plugin sends (for `hooks status`). */
export const OPENCODE_HOOK_EVENTS = [
  "SessionStart",
  "UserPromptSubmit",
  "PreToolUse",
  "PostToolUse",
  "PermissionRequest",
  "Stop",
  "StopFailure",
] as const;

type Env = Record<string, string | undefined>;

/** opencode's config dir: `$OPENCODE_CONFIG_DIR`, else `$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`. */
export function opencodeConfigDir(env: Env): string {
  if (env.OPENCODE_CONFIG_DIR) return env.OPENCODE_CONFIG_DIR;
  return `${env.XDG_CONFIG_HOME || `${env.HOME ?? "."}/.config`}/opencode`;
}

/** Where `hooks setup --agent opencode` puts the plugin. */
export function opencodePluginFile(env: Env): string {
  return `${opencodeConfigDir(env)}/plugins/paneflow.js`;
}

/** Whether a plugin file's text is paneflow's. */
export function isPaneflowPlugin(text: string): boolean {
  return text.startsWith(OPENCODE_PLUGIN_MARKER);
}

/**
 * The plugin's source. `argv` is the command that starts `paneflow` (e.g.
 * `["/usr/local/bin/paneflow"]`); the plugin appends `ai-hook --tool opencode
 * <Event>`.
 */
export function opencodePluginSource(argv: string[]): string {
  const command = JSON.stringify([...argv, "ai-hook", "--tool", "opencode"]);
  return `${OPENCODE_PLUGIN_MARKER}: reports opencode's turns to paneflow as ai.* frames.
// Written by \`paneflow hooks setup --agent opencode\` (or per launch by paneflow); removed by
// \`paneflow hooks uninstall --agent opencode\`. Edits are overwritten by the next setup.
import { spawn } from "node:child_process";

const COMMAND = ${command};
let queue = Promise.resolve();

/** Runs \`paneflow ai-hook --tool opencode <event>\` with the payload on stdin, after the previous one. */
function send(event, payload) {
  if (!process.env.PANEFLOW_SURFACE_ID) return;
  queue = queue.then(() =>
    new Promise((resolve) => {
      try {
        const child = spawn(COMMAND[0], [...COMMAND.slice(1), event], { stdio: ["pipe", "ignore", "ignore"] });
        const timer = setTimeout(() => {
          try {
            child.kill();
          } catch { /* gone */ }
          resolve();
        }, 3000);
        const done = () => {
          clearTimeout(timer);
          resolve();
        };
        child.on("error", done);
        child.on("exit", done);
        child.stdin.on("error", () => {});
        child.stdin.end(JSON.stringify(payload));
      } catch {
        resolve();
      }
    })
  );
}

export const PaneflowPlugin = async () => {
  const assistant = new Set();
  const children = new Set();
  const reply = new Map();
  // Sessions in a turn (a prompt seen, no end yet).
  const active = new Set();
  const ours = (sid) => typeof sid === "string" && !children.has(sid);
  // Not at load: opencode loads plugins before its TUI takes input, and an early "idle" would
  // invite a prompt the TUI drops. The screen says idle until the first session starts.
  return {
    "chat.message": async (input, output) => {
      const sid = input?.sessionID;
      if (!ours(sid)) return;
      const parts = Array.isArray(output?.parts) ? output.parts : [];
      const prompt = parts.filter((p) => p?.type === "text" && !p.synthetic).map((p) => p.text).join("\\n");
      active.add(sid);
      reply.delete(sid);
      send("UserPromptSubmit", { session_id: sid, prompt });
    },
    "tool.execute.before": async (input, output) => {
      if (!ours(input?.sessionID)) return;
      send("PreToolUse", { session_id: input.sessionID, tool_name: input.tool, tool_input: output?.args ?? {} });
    },
    "tool.execute.after": async (input) => {
      if (!ours(input?.sessionID)) return;
      send("PostToolUse", { session_id: input.sessionID, tool_name: input.tool, tool_input: input.args ?? {} });
    },
    event: async ({ event }) => {
      const p = event?.properties ?? {};
      switch (event?.type) {
        case "session.created":
        case "session.updated":
          if (p.info?.parentID) children.add(p.info.id);
          else if (event.type === "session.created") send("SessionStart", { session_id: p.info?.id });
          break;
        case "message.updated":
          if (p.info?.role === "assistant") assistant.add(p.info.id);
          break;
        case "message.part.updated": {
          const part = p.part;
          if (part?.type === "text" && !part.synthetic && assistant.has(part.messageID) && part.text) {
            reply.set(part.sessionID, part.text);
          }
          break;
        }
        case "permission.asked":
        case "permission.updated": {
          if (!ours(p.sessionID)) break;
          const patterns = Array.isArray(p.patterns) ? p.patterns : [p.pattern].flat();
          const command = p.metadata?.command ?? patterns.find((x) => typeof x === "string");
          send("PermissionRequest", {
            session_id: p.sessionID,
            tool_name: p.permission ?? p.type,
            tool_input: command ? { command } : {},
            message: p.title,
          });
          break;
        }
        case "permission.replied":
          if (p.reply === "reject" || p.response === "reject") active.delete(p.sessionID);
          break;
        case "session.error": {
          const sid = p.sessionID;
          if (!ours(sid) || !active.has(sid)) break;
          active.delete(sid);
          if (p.error?.name === "MessageAbortedError") break;
          send("StopFailure", {
            session_id: sid,
            error_type: p.error?.name ?? "error",
            error_message: p.error?.data?.message ?? p.error?.message,
          });
          break;
        }
        case "session.idle": {
          const sid = p.sessionID;
          if (!ours(sid) || !active.has(sid)) break;
          active.delete(sid);
          send("Stop", { session_id: sid, last_assistant_message: reply.get(sid) });
          break;
        }
      }
    },
  };
};
`;
}
