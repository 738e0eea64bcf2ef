/**
 * Dependency cycles in a flow's `needs` graph, reported as paths.
 *
 * @module
 */

/**
 * Every dependency cycle in `edges` (node → needs), one per strongly connected
 * group, each as a path that starts and ends at the same node (`a → c → b → a`).
 * A node that needs itself is not reported here.
 */
export function findCycles(edges: Map<string, string[]>): string[][] {
  // Tarjan's strongly connected components, then one cycle through each group.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const groups: string[][] = [];
  let next = 0;
  const connect = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) groups.push(group);
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) connect(v);
  const order = [...edges.keys()];
  return groups
    .map((group) => {
      const members = new Set(group);
      const start = order.find((n) => members.has(n))!;
      // Walk from the group's first node (in file order) back to it, inside the group.
      const path = [start];
      const seen = new Set([start]);
      const walk = (n: string): boolean => {
        for (const m of edges.get(n) ?? []) {
          if (m === start) return path.push(m), true;
          if (!members.has(m) || seen.has(m)) continue;
          seen.add(m);
          path.push(m);
          if (walk(m)) return true;
          path.pop();
        }
        return false;
      };
      walk(start);
      return path;
    })
    .sort((a, b) => order.indexOf(a[0]) - order.indexOf(b[0]));
}
