/**
 * Shell prompt rules as data: what a prompt line of sh, bash, zsh and fish
 * looks like with their default settings, plus the patterns a user adds
 * (config `paneio.prompt_patterns`, or `prompt` on one `ask`). `ask` drops
 * lines that are only a prompt; readiness wants a prompt on the cursor's line.
 *
 * @module
 */

/** One prompt rule. */
export interface PromptRule {
  /** Which shell's default this is. */
  shell: string;
  /** What it looks like, for the docs. */
  example: string;
  /** A prompt line: the whole prompt, anchored at the line's start (what follows is the command). */
  pattern: RegExp;
  /** A continuation prompt (PS2): the shell waits for the rest of a command, so not ready. */
  continuation?: boolean;
}

/** The default prompts of the shells paneflow knows. */
export const PROMPT_RULES: readonly PromptRule[] = [
  // dash/sh and bash's POSIX-mode PS1; root gets `#`.
  { shell: "sh", example: "$ ", pattern: /^[$#] ?/ },
  // bash without an rc file: `\s-\v\$ `.
  { shell: "bash", example: "bash-5.2$ ", pattern: /^(?:ba|da|k|mk|z|)sh-\d+(?:\.\d+)*[$#] ?/ },
  // bash with Debian/Ubuntu's /etc/bash.bashrc or skeleton .bashrc: `\u@\h:\w\$ `, maybe a (chroot) or (venv).
  { shell: "bash", example: "user@host:~/src$ ", pattern: /^(?:\([^)]*\) ?)*[\w.-]+@[\w.-]+:[^\n]*?[$#] ?/ },
  // zsh's default PS1 `%m%# `.
  { shell: "zsh", example: "host% ", pattern: /^[\w.-]+[%#] ?/ },
  // fish's default prompt: `user@host ~/src>` (root: `#`).
  { shell: "fish", example: "user@host ~/src> ", pattern: /^[\w.-]+@[\w.-]+ [^\n]*?[>#] ?/ },
  // Continuations: bash/sh/zsh PS2 `> `, zsh's `quote> `, `dquote> ` and friends.
  { shell: "sh", example: "> ", pattern: /^> ?/, continuation: true },
  {
    shell: "zsh",
    example: "dquote> ",
    pattern:
      /^(?:(?:cmdand|cmdor|cmdsubst|dquote|quote|bquote|heredoc|pipe|subsh|cursh|brace|math|case|for|while|until|if|then|else|elif|foreach|select|repeat) ?)+> ?/,
    continuation: true,
  },
];

/** Prompt rules compiled from user patterns (each must match at the line's start to count). */
export function userRules(patterns: readonly string[]): PromptRule[] {
  return patterns.map((p) => ({
    shell: "custom",
    example: p,
    pattern: new RegExp(p.startsWith("^") ? p : `^(?:${p})`),
  }));
}

/** Checks user patterns; returns the first problem or null. */
export function patternProblem(pattern: string): string | null {
  try {
    new RegExp(pattern);
    return null;
  } catch (e) {
    return `invalid regular expression /${pattern}/: ${(e as Error).message}`;
  }
}

/** The rule the line starts with (its longest match), or null. */
export function promptOf(
  line: string,
  rules: readonly PromptRule[],
): { rule: PromptRule; rest: string } | null {
  let best: { rule: PromptRule; rest: string; len: number } | null = null;
  // A screen row loses its trailing spaces: a pattern ending in a space still matches a bare prompt.
  const padded = line.endsWith(" ") ? line : line + " ";
  for (const rule of rules) {
    for (const text of [line, padded]) {
      const m = rule.pattern.exec(text);
      if (m && m.index === 0 && (!best || m[0].length > best.len)) {
        best = { rule, rest: text.slice(m[0].length), len: m[0].length };
      }
    }
  }
  return best ? { rule: best.rule, rest: best.rest } : null;
}

/** Whether the line is a prompt with nothing typed after it. */
export function isBarePrompt(line: string, rules: readonly PromptRule[]): boolean {
  const p = promptOf(line.trimEnd(), rules);
  return p !== null && p.rest.trim() === "";
}

/** The prompt state of the cursor's line: a shell waiting for a command, for the rest of one, or neither. */
export function promptState(line: string, rules: readonly PromptRule[]): "prompt" | "continuation" | null {
  const p = promptOf(line.trimEnd(), rules);
  if (!p || p.rest.trim() !== "") return null;
  return p.rule.continuation ? "continuation" : "prompt";
}
