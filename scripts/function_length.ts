/**
 * A `deno lint` plugin that measures functions with Deno's own parser, so
 * strings, comments and template literals cannot fool the count.
 * scripts/structure.ts runs it over `src/` and holds the cap and the
 * allow-list; it is not registered in deno.json.
 *
 * It reports every named function (declarations, methods, and function or
 * arrow expressions assigned to a name) over `MAX_FUNCTION_LINES`, as one
 * diagnostic whose message is `<name>\t<lines>`. Anonymous callbacks are
 * counted as part of the function that holds them.
 *
 * @module
 */

import { MAX_FUNCTION_LINES } from "./structure.ts";

type Node = Deno.lint.Node;
type Fn = Deno.lint.FunctionDeclaration | Deno.lint.FunctionExpression | Deno.lint.ArrowFunctionExpression;
type Member = Deno.lint.Property | Deno.lint.MethodDefinition | Deno.lint.PropertyDefinition;

/** The name of a property, method or class field key. */
function keyName(key: Node): string | undefined {
  if (key.type === "Identifier" || key.type === "PrivateIdentifier") {
    return key.type === "PrivateIdentifier" ? `#${key.name}` : key.name;
  }
  if (key.type === "Literal" && typeof key.value === "string") return key.value;
  return undefined;
}

/** The name of the class or object literal that holds a member, if it has one. */
function ownerName(container: Node | undefined): string | undefined {
  let n = container;
  if (n?.type === "ClassBody") n = n.parent;
  if ((n?.type === "ClassDeclaration" || n?.type === "ClassExpression") && n.id) return n.id.name;
  if (n?.type === "ObjectExpression" && n.parent?.type === "VariableDeclarator") {
    const id = n.parent.id;
    if (id.type === "Identifier") return id.name;
  }
  return undefined;
}

/** A member's name, qualified by its owner when that has a name (`Class.#method`, `verb.run`). */
function memberName(member: Member): string | undefined {
  const key = keyName(member.key);
  if (key === undefined) return undefined;
  const owner = ownerName(member.parent);
  return owner ? `${owner}.${key}` : key;
}

/** The name a function is known by, or undefined for an anonymous callback. */
export function functionName(fn: Fn): string | undefined {
  if (fn.type === "FunctionDeclaration") return fn.id?.name;
  const parent = fn.parent;
  switch (parent?.type) {
    case "VariableDeclarator":
      return parent.id.type === "Identifier" ? parent.id.name : undefined;
    case "Property":
    case "MethodDefinition":
    case "PropertyDefinition":
      return parent.value === fn ? memberName(parent) : undefined;
    case "AssignmentExpression":
      if (parent.left.type === "Identifier") return parent.left.name;
      return parent.left.type === "MemberExpression" ? keyName(parent.left.property) : undefined;
  }
  return undefined;
}

/** Lines a node spans in its source, first and last included. */
function linesOf(text: string, node: Node): number {
  const [start, end] = node.range;
  let lines = 1;
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === 10) lines++;
  return lines;
}

const plugin: Deno.lint.Plugin = {
  name: "paneflow",
  rules: {
    "function-length": {
      create(context) {
        const measure = (fn: Fn) => {
          const name = functionName(fn);
          if (name === undefined) return;
          const lines = linesOf(context.sourceCode.text, fn);
          if (lines > MAX_FUNCTION_LINES) context.report({ node: fn, message: `${name}\t${lines}` });
        };
        return {
          FunctionDeclaration: measure,
          FunctionExpression: measure,
          ArrowFunctionExpression: measure,
        };
      },
    },
  },
};

export default plugin;
