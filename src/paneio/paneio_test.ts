import assert from "node:assert/strict";
import { parseReply } from "./ask.ts";
import { isBarePrompt, PROMPT_RULES, promptState, userRules } from "../spec/prompts.ts";
import { parseQueue, splitChunks } from "./store.ts";

Deno.test("prompt rules: the shells' default prompts, continuations, and user patterns", () => {
  for (
    const p of [
      "$ ",
      "# ",
      "bash-5.2$ ",
      "user@host:~/src$ ",
      "(venv) user@host:/x$",
      "host% ",
      "u@h ~/src> ",
    ]
  ) {
    assert.equal(promptState(p, PROMPT_RULES), "prompt", p);
  }
  for (const p of ["> ", "dquote> ", "for cmdsubst> "]) {
    assert.equal(promptState(p, PROMPT_RULES), "continuation", p);
  }
  for (const p of ["hello", "$ ls -l", "total 4", ""]) {
    assert.notEqual(promptState(p, PROMPT_RULES), "prompt", p);
  }
  const custom = [...userRules(["λ "]), ...PROMPT_RULES];
  assert.equal(isBarePrompt("λ ", custom), true);
  assert.equal(isBarePrompt("λ ", PROMPT_RULES), false);
});

Deno.test("parseReply: the marker counts only after the echo; prompts and blank ends go", () => {
  const rows = ["$ echo hi; echo DONE", "hi", "", "DONE", "$"];
  assert.deepEqual(parseReply(rows, "echo hi; echo DONE", "DONE", PROMPT_RULES).reply, "hi");
  // Not echoed yet: nothing found even though the marker is on screen (in the typed command).
  assert.equal(parseReply(["$ echo hi; echo DO"], "echo hi; echo DONE", "DONE", PROMPT_RULES).found, false);
  // A command wrapped over two rows.
  const long = "echo " + "x".repeat(30) + "; echo END";
  const wrapped = ["$ " + long.slice(0, 20), long.slice(20), "x".repeat(30), "END", "$"];
  assert.equal(parseReply(wrapped, long, "END", PROMPT_RULES).reply, "x".repeat(30));
  // Text before the marker on its row is kept.
  assert.equal(parseReply(["$ cmd", "a", "b MARK"], "cmd", "MARK", PROMPT_RULES).reply, "a\nb");
  // An agent's redrawn screen: the newest showing of the prompt is the echo.
  const agent = ["❯ old question MARK", "⏺ old", "❯ new question", "⏺ answer", "MARK", "───", "❯ "];
  assert.equal(parseReply(agent, "new question", "MARK", PROMPT_RULES, { lastEcho: true }).reply, "⏺ answer");
});

Deno.test("queue files: chunks, line numbers of problems, the file name checked", () => {
  const one =
    "id: m1\nfrom: a\nto: b\ntype: task\nstatus: pending\ncontent: x\ntimestamp: 2025-02-02T12:00:00\n";
  const two = one.replace("m1", "m2");
  const text = `# comment\n${one}---\n${two}---\n${
    one.replace("m1", "m3").replace("type: task", "type: nope")
  }`;
  assert.deepEqual(splitChunks(text).map((c) => c.line), [1, 9, 17]);
  const p = parseQueue(text, "/q/queue/a_to_b.yaml");
  assert.deepEqual(p.messages.map((m) => [m.msg.id, m.line]), [["m1", 2], ["m2", 10]]);
  assert.equal(p.problems.length, 1);
  assert.equal(p.problems[0].line, 21);
  assert.match(p.problems[0].message, /"type"/);
  const wrong = parseQueue(one, "/q/queue/x_to_b.yaml");
  assert.match(wrong.problems[0].message, /belongs in queue\/a_to_b\.yaml/);
  const dup = parseQueue(`${one}---\n${one}`, "/q/queue/a_to_b.yaml");
  assert.match(dup.problems[0].message, /used twice/);
});
