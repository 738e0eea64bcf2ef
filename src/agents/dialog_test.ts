import assert from "node:assert/strict";
import { classifyScreen, type ScreenRules } from "./classify.ts";
import { CLAUDE_SCREEN } from "./claude_screen.ts";
import { CODEX_SCREEN } from "./codex_screen.ts";
import { type DialogSpec, fnv1aHex, resolveAnswer } from "./dialog.ts";
import { GEMINI_SCREEN } from "./gemini_screen.ts";
import { OPENCODE_SCREEN } from "./opencode_screen.ts";

const fixture = (path: string) =>
  Deno.readTextFileSync(new URL(`../../tests/fixtures/${path}.txt`, import.meta.url));

/** A dialog captured from each real CLI: its options, and the keys approve, deny and option 2 press. */
const DIALOGS: [ScreenRules, string, string[], string[], string[], string[]][] = [
  [
    CLAUDE_SCREEN,
    "claude/permission_bash",
    ["Yes", "Yes, and always allow access to", "Yes, and switch to auto mode", "No"],
    ["1"],
    ["esc"],
    ["2"],
  ],
  [
    CODEX_SCREEN,
    "codex/permission_exec",
    ["Yes, proceed (y)", "Yes, and don't ask again", "No, and tell Codex what to do differently (esc)"],
    ["1"],
    ["esc"],
    ["2"],
  ],
  [
    CODEX_SCREEN,
    "codex/hooks_review",
    ["Review hooks", "Trust all and continue", "Continue without trusting (hooks won't run)"],
    ["2", "enter"],
    ["3", "enter"],
    ["2", "enter"],
  ],
  [
    GEMINI_SCREEN,
    "gemini/permission_shell",
    ["Allow once", "Allow for this session", "No, suggest changes (esc)"],
    ["1"],
    ["esc"],
    ["2"],
  ],
  [
    GEMINI_SCREEN,
    "gemini/permission_shell_plain",
    ["Allow once", "Allow for this session", "No, suggest changes (esc)"],
    ["1"],
    ["esc"],
    ["2"],
  ],
  [
    OPENCODE_SCREEN,
    "opencode/permission_shell",
    ["Allow once", "Allow always", "Reject"],
    ["enter"],
    ["esc"],
    [
      "right",
      "enter",
    ],
  ],
];

Deno.test("dialogs: each agent's dialog lists its options, carries an id and knows its keys", () => {
  for (const [rules, file, options, approve, deny, second] of DIALOGS) {
    const screen = fixture(file);
    const v = classifyScreen(rules, screen);
    assert.ok(v?.dialog, `${file}: a dialog`);
    assert.equal(v.dialog.options.length, options.length, `${file}: ${JSON.stringify(v.dialog.options)}`);
    options.forEach((o, i) =>
      assert.ok(v.dialog!.options[i].startsWith(o), `${file}: ${v.dialog!.options[i]}`)
    );
    assert.match(v.dialog.id, /^[0-9a-f]{8}$/);
    // The same screen gives the same id; another dialog another.
    assert.equal(classifyScreen(rules, screen)?.dialog?.id, v.dialog.id);
    const spec = rules.rules.find((r) => r.id === v.rule)!.dialog!;
    assert.deepEqual(resolveAnswer(spec, v.dialog.options, "approve").keys, approve, file);
    assert.deepEqual(resolveAnswer(spec, v.dialog.options, "deny").keys, deny, file);
    assert.deepEqual(resolveAnswer(spec, v.dialog.options, "2"), {
      keys: second,
      option: v.dialog.options[1],
    });
  }
  const ids = DIALOGS.map(([rules, file]) => classifyScreen(rules, fixture(file))?.dialog?.id);
  assert.equal(new Set(ids.slice(0, 3)).size, 3, "different dialogs, different ids");
});

Deno.test("dialogs: screens without a dialog carry none", () => {
  for (
    const [rules, file] of [[CLAUDE_SCREEN, "claude/idle_startup"], [CODEX_SCREEN, "codex/busy"]] as const
  ) {
    assert.equal(classifyScreen(rules, fixture(file))?.dialog, null, file);
  }
});

Deno.test("dialogs: an answer names approve, deny, an option's number or its label", () => {
  const spec: DialogSpec = { options: () => [], approve: ["a"], deny: ["d"], pick: (n) => [`p${n}`] };
  const options = ["Yes", "Yes, and don't ask again", "No, and tell Codex"];
  assert.deepEqual(resolveAnswer(spec, options, "APPROVE"), { keys: ["a"], option: null });
  assert.deepEqual(resolveAnswer(spec, options, " deny "), { keys: ["d"], option: null });
  assert.deepEqual(resolveAnswer(spec, options, "3"), { keys: ["p3"], option: "No, and tell Codex" });
  assert.deepEqual(resolveAnswer(spec, options, "yes"), { keys: ["p1"], option: "Yes" }, "exact wins");
  assert.deepEqual(resolveAnswer(spec, options, "don't ask"), { keys: ["p2"], option: options[1] });
  assert.throws(
    () => resolveAnswer(spec, options, "4"),
    /^Error: Option 4 is not one of the dialog's options \(1\. "Yes"/,
  );
  assert.throws(() => resolveAnswer(spec, options, "0"), /Option 0 is not one/);
  assert.throws(
    () => resolveAnswer(spec, options, "maybe"),
    /Answer "maybe" matches none of the dialog's options/,
  );
  assert.throws(() => resolveAnswer(spec, ["Allow once", "Allow always"], "allow"), /matches several/);
  assert.throws(() => resolveAnswer(spec, [], "2"), /none read from the screen/);
});

Deno.test("dialogs: fnv1aHex is ptywright's FNV-1a", () => {
  assert.equal(fnv1aHex(""), "811c9dc5");
  assert.equal(fnv1aHex("a"), "e40c292c");
});
