import assert from "node:assert/strict";
import { UsageError } from "../errors.ts";
import { type OptionSpec, parseArgs, type PositionalSpec, renderHelp } from "./_verb.ts";

const OPTIONS = {
  json: { type: "boolean", description: "Print JSON" },
  raw: { type: "boolean", short: "r", description: "No fence" },
  name: { type: "string", value: "<name>", description: "Pane name" },
  lines: { type: "number", short: "n", value: "<n>", description: "How many lines" },
  type: { type: "string", multiple: true, value: "<event>", description: "Event type" },
  port: { type: "number", multiple: true, description: "Ports" },
} satisfies Record<string, OptionSpec>;

const ONE: PositionalSpec[] = [{ name: "target" }];

function parse(argv: string[], positionals: PositionalSpec[] = ONE) {
  return parseArgs("read", OPTIONS, positionals, argv);
}

function usageError(fn: () => unknown, message: string) {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof UsageError, `expected UsageError, got ${e}`);
    assert.equal(e.message, message);
    return true;
  });
}

Deno.test("parseArgs gives defaults when no option is given", () => {
  assert.deepEqual(parse(["web"]), {
    opts: { json: false, raw: false, name: undefined, lines: undefined, type: [], port: [] },
    args: ["web"],
    help: false,
  });
});

Deno.test("parseArgs sets booleans by long and short name", () => {
  const p = parse(["--json", "web", "-r"]);
  assert.equal(p.opts.json, true);
  assert.equal(p.opts.raw, true);
  assert.deepEqual(p.args, ["web"]);
});

Deno.test("parseArgs refuses a value on a boolean", () => {
  usageError(() => parse(["web", "--json=yes"]), `Option "--json" of paneflow read takes no value`);
});

Deno.test("parseArgs reads values as the next argument or after =", () => {
  assert.equal(parse(["web", "--name", "api"]).opts.name, "api");
  assert.equal(parse(["web", "--name=api"]).opts.name, "api");
  assert.equal(parse(["web", "--name=a=b"]).opts.name, "a=b");
  assert.equal(parse(["web", "--name="]).opts.name, "");
  // A known option right after is a forgotten value, not the value; `--name=--json` still works.
  usageError(() => parse(["web", "--name", "--json"]), `Option "--name" of paneflow read needs a value`);
  assert.equal(parse(["web", "--name=--json"]).opts.name, "--json");
  assert.equal(parse(["web", "--name", "--other"]).opts.name, "--other");
  assert.equal(parse(["web", "--name", "-5"]).opts.name, "-5");
});

Deno.test("parseArgs keeps the last value of a non-repeatable option", () => {
  assert.equal(parse(["web", "--name", "a", "--name", "b"]).opts.name, "b");
});

Deno.test("parseArgs collects repeatable options in order", () => {
  const p = parse(["web", "--type", "a", "--type=b", "--port", "1", "--port=2"]);
  assert.deepEqual(p.opts.type, ["a", "b"]);
  assert.deepEqual(p.opts.port, [1, 2]);
});

Deno.test("parseArgs parses numbers, negative and fractional ones included", () => {
  assert.equal(parse(["web", "--lines", "40"]).opts.lines, 40);
  assert.equal(parse(["web", "-n", "7"]).opts.lines, 7);
  assert.equal(parse(["web", "--lines=-3"]).opts.lines, -3);
  assert.equal(parse(["web", "--lines", "-3"]).opts.lines, -3);
  assert.equal(parse(["web", "--lines", "2.5"]).opts.lines, 2.5);
  assert.equal(parse(["web", "--lines", "0"]).opts.lines, 0);
});

Deno.test("parseArgs refuses a number option that is not a number", () => {
  usageError(
    () => parse(["web", "--lines", "ten"]),
    `Option "--lines" of paneflow read needs a number, got "ten"`,
  );
  usageError(() => parse(["web", "--lines="]), `Option "--lines" of paneflow read needs a number, got ""`);
  usageError(
    () => parse(["web", "--lines", " "]),
    `Option "--lines" of paneflow read needs a number, got " "`,
  );
  usageError(
    () => parse(["web", "--lines", "Infinity"]),
    `Option "--lines" of paneflow read needs a number, got "Infinity"`,
  );
  usageError(
    () => parse(["web", "--port", "1", "--port", "x"]),
    `Option "--port" of paneflow read needs a number, got "x"`,
  );
});

Deno.test("parseArgs reports an unknown option with the verb and a hint", () => {
  usageError(
    () => parse(["web", "--bogus"]),
    `Unknown option "--bogus" for paneflow read; see paneflow read --help`,
  );
  usageError(
    () => parse(["web", "--bogus=1"]),
    `Unknown option "--bogus" for paneflow read; see paneflow read --help`,
  );
  usageError(() => parse(["web", "-x"]), `Unknown option "-x" for paneflow read; see paneflow read --help`);
  // Short options do not cluster.
  usageError(() => parse(["web", "-rn"]), `Unknown option "-rn" for paneflow read; see paneflow read --help`);
});

Deno.test("parseArgs reports an option whose value is missing", () => {
  usageError(() => parse(["web", "--name"]), `Option "--name" of paneflow read needs a value`);
  usageError(() => parse(["web", "-n"]), `Option "--lines" of paneflow read needs a value`);
});

Deno.test("parseArgs reports a missing positional by name", () => {
  usageError(() => parse([]), `Missing <target> for paneflow read; see paneflow read --help`);
  usageError(
    () => parse(["web"], [{ name: "target" }, { name: "text" }]),
    `Missing <text> for paneflow read; see paneflow read --help`,
  );
});

Deno.test("parseArgs reports the first extra positional", () => {
  usageError(
    () => parse(["web", "api", "db"]),
    `Unexpected argument "api" for paneflow read; see paneflow read --help`,
  );
});

Deno.test("parseArgs accepts optional and rest positionals", () => {
  const optional: PositionalSpec[] = [{ name: "target" }, { name: "name", optional: true }];
  assert.deepEqual(parse(["web"], optional).args, ["web"]);
  assert.deepEqual(parse(["web", "api"], optional).args, ["web", "api"]);
  const rest: PositionalSpec[] = [{ name: "target" }, { name: "command", optional: true, rest: true }];
  assert.deepEqual(parse(["web", "a", "b", "c"], rest).args, ["web", "a", "b", "c"]);
  usageError(() => parse([], rest), `Missing <target> for paneflow read; see paneflow read --help`);
});

Deno.test("parseArgs takes everything after -- as positionals", () => {
  const rest: PositionalSpec[] = [{ name: "target" }, { name: "text", rest: true }];
  const p = parse(["web", "--json", "--", "--name", "-n", "--", "--help"], rest);
  assert.deepEqual(p.args, ["web", "--name", "-n", "--", "--help"]);
  assert.equal(p.opts.json, true);
  assert.equal(p.opts.name, undefined);
  assert.equal(p.help, false);
  assert.deepEqual(parse(["--", "-x"]).args, ["-x"]);
});

Deno.test("parseArgs treats negative numbers and a lone dash as positionals", () => {
  const two: PositionalSpec[] = [{ name: "a" }, { name: "b" }];
  assert.deepEqual(parse(["-1", "-2.5"], two).args, ["-1", "-2.5"]);
  assert.deepEqual(parse(["-"]).args, ["-"]);
});

Deno.test("parseArgs sees --help and -h anywhere and then skips the positional checks", () => {
  for (const argv of [["--help"], ["-h"], ["a", "b", "c", "--help"], ["--json", "-h"]]) {
    const p = parse(argv);
    assert.equal(p.help, true, argv.join(" "));
  }
  assert.equal(parse(["--json", "-h"]).opts.json, true);
});

Deno.test("renderHelp lays out usage, summary, details, options and aliases", () => {
  const help = renderHelp(
    {
      name: "read",
      summary: "Read a pane",
      usage: "paneflow read <target>",
      aliases: ["read_pane", "r"],
      details: "More words.",
    },
    {
      lines: { type: "number", short: "n", value: "<n>", description: "How many lines" },
      raw: { type: "boolean", description: "No fence" },
      type: { type: "string", multiple: true, description: "Event type" },
    },
  );
  assert.equal(
    help,
    [
      "Usage: paneflow read <target>",
      "",
      "Read a pane",
      "",
      "More words.",
      "",
      "Options:",
      "  -n, --lines <n>  How many lines",
      "  --raw            No fence",
      "  --type <value>   Event type (repeatable)",
      "  -h, --help       Show this help",
      "",
      "Aliases: read_pane, r",
    ].join("\n"),
  );
});

Deno.test("renderHelp without details, aliases or options", () => {
  assert.equal(
    renderHelp({ name: "ls", summary: "List panes", usage: "paneflow ls" }, {}),
    ["Usage: paneflow ls", "", "List panes", "", "Options:", "  -h, --help  Show this help"].join("\n"),
  );
});
