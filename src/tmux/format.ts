/**
 * tmux formats (`#{pane_id}`, `#{?cond,a,b}`, `#{==:a,b}`, `#D`, `##`), as
 * tmux 3.3a expands them: an unknown variable is empty. Pure.
 *
 * @module
 */

/** Looks a variable up; undefined when it is unknown (expanded empty). */
export type Lookup = (name: string) => string | undefined;

const SHORT: Record<string, string> = {
  D: "pane_id",
  F: "window_flags",
  H: "host",
  h: "host_short",
  I: "window_index",
  P: "pane_index",
  S: "session_name",
  T: "pane_title",
  W: "window_name",
};

/** Whether a value counts as true in `#{?…}`: non-empty and not "0". */
function truthy(v: string): boolean {
  return v !== "" && v !== "0";
}

/** The index of the `}` closing the `#{` whose body starts at `from`. */
function closing(fmt: string, from: number): number {
  let depth = 1;
  for (let i = from; i < fmt.length; i++) {
    if (fmt[i] === "#" && fmt[i + 1] === "{") {
      depth++;
      i++;
    } else if (fmt[i] === "}" && --depth === 0) return i;
  }
  return -1;
}

/** Splits at the commas outside nested `#{…}`; `#,` is a literal comma. */
function splitTop(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === "#" && body[i + 1] === "{") {
      depth++;
      i++;
    } else if (c === "#" && body[i + 1] === ",") i++;
    else if (c === "}" && depth > 0) depth--;
    else if (c === "," && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

function evaluate(body: string, lookup: Lookup): string {
  if (body.startsWith("?")) {
    const parts = splitTop(body.slice(1));
    if (parts.length < 2) return "";
    const cond = parts[0].includes("#") ? expand(parts[0], lookup) : lookup(parts[0]) ?? "";
    const chosen = truthy(cond) ? parts[1] : parts[2] ?? "";
    return expand(chosen, lookup);
  }
  const op = /^(==|!=|<|>|<=|>=|\|\||&&):/.exec(body);
  if (op) {
    const parts = splitTop(body.slice(op[0].length));
    if (parts.length !== 2) return "";
    const [a, b] = parts.map((p) => expand(p, lookup));
    switch (op[1]) {
      case "==":
        return a === b ? "1" : "0";
      case "!=":
        return a !== b ? "1" : "0";
      case "<":
        return a < b ? "1" : "0";
      case ">":
        return a > b ? "1" : "0";
      case "<=":
        return a <= b ? "1" : "0";
      case ">=":
        return a >= b ? "1" : "0";
      case "||":
        return truthy(a) || truthy(b) ? "1" : "0";
      default:
        return truthy(a) && truthy(b) ? "1" : "0";
    }
  }
  return lookup(body) ?? "";
}

/** Expands a format with `lookup`. */
export function expand(fmt: string, lookup: Lookup): string {
  let out = "";
  for (let i = 0; i < fmt.length; i++) {
    const c = fmt[i];
    if (c !== "#" || i + 1 >= fmt.length) {
      out += c;
      continue;
    }
    const n = fmt[i + 1];
    if (n === "{") {
      const end = closing(fmt, i + 2);
      if (end < 0) {
        out += fmt.slice(i);
        break;
      }
      out += evaluate(fmt.slice(i + 2, end), lookup);
      i = end;
    } else if (n === "#" || n === "," || n === "}") {
      out += n;
      i++;
    } else if (SHORT[n]) {
      out += lookup(SHORT[n]) ?? "";
      i++;
    } else {
      out += c;
    }
  }
  return out;
}
