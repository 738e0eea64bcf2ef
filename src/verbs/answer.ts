import { withClient } from "../client/client.ts";
import { resolveOne } from "../client/selectors.ts";
import { CliFailure, UsageError } from "../errors.ts";
import { explainGate } from "./send.ts";
import { defineVerb, printJson } from "./_verb.ts";

/** What `paneflow answer` was asked: the answer and, with --dialog, the dialog it is meant for. */
export interface AnswerArgs {
  answer: string;
  dialogId: string | undefined;
}

/** Checks the answer and the dialog id (pure; throws {@link UsageError}). */
export function parseAnswerArgs(answer: string, dialog: string | undefined): AnswerArgs {
  const a = answer.trim();
  if (!a) throw new UsageError('Missing the answer: "approve", "deny", or an option\'s number or label');
  if (a.length > 256) {
    throw new UsageError(`Answer is ${a.length} characters; an option label is at most 256`);
  }
  if (/^\d+$/.test(a) && Number(a) < 1) {
    throw new UsageError(`Option "${a}" does not exist: options are numbered from 1`);
  }
  if (dialog !== undefined && !/^[0-9a-f]{8}$/.test(dialog)) {
    throw new UsageError(
      `"--dialog": ${JSON.stringify(dialog)} is not a dialog id (8 hex digits, as status gives it)`,
    );
  }
  return { answer: /^(approve|deny)$/i.test(a) ? a.toLowerCase() : a, dialogId: dialog };
}

export default defineVerb({
  name: "answer",
  usage: "paneflow answer <target> <approve|deny|option> [--dialog <id>] [--json]",
  details: [
    "Answers the dialog an agent shows (Claude Code's, Codex's, Gemini CLI's and opencode's",
    "permission dialogs, Codex's hooks review) with the keys paneflow's screen rules name for it,",
    "Enter included. An option is its number or (part of) its label. --dialog <id> (dialog_id",
    "from status --json) refuses if another dialog is up by then. Exits 1 when the pane shows no",
    "dialog, the option is unknown, or the dialog is still up afterwards. Needs",
    "PANEFLOW_IPC_SCRIPTING=1.",
  ].join("\n"),
  options: {
    dialog: { type: "string", value: "<id>", description: "Answer only this dialog (dialog_id from status)" },
    json: { type: "boolean", description: "Print the result object" },
  },
  positionals: [{ name: "target" }, { name: "answer" }],
  run({ opts, args }) {
    const { answer, dialogId } = parseAnswerArgs(args[1], opts.dialog);
    return withClient(async (client) => {
      const surface_id = await resolveOne(client, args[0]);
      const result = await client.call("surface.answer", {
        surface_id,
        answer,
        ...(dialogId === undefined ? {} : { dialog_id: dialogId }),
      }).catch(explainGate);
      if (opts.json) printJson(result);
      if (!result.closed) {
        throw new CliFailure(
          `The dialog on pane ${surface_id} is still up ${result.elapsed_ms} ms after the answer; ` +
            `look at it with paneflow read ${surface_id}`,
        );
      }
      return 0;
    });
  },
});
