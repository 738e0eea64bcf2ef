/**
 * Workspace methods: list, create, select, close, up, layouts.
 *
 * @module
 */
import { prefillPrompt, workspaceUp } from "../../up/apply.ts";
import type { FamilyHandlers } from "./_types.ts";

/** The `workspace.*` handlers. */
export const workspace: FamilyHandlers<"workspace"> = {
  "workspace.list": ({ registry }) => ({
    workspaces: registry.workspaces.map((ws) => registry.describeWorkspace(ws)),
  }),
  "workspace.current": ({ registry }) => registry.describeWorkspace(registry.workspaceAt()),
  "workspace.create": async (ctx, p) => {
    const { registry } = ctx;
    const { workspace, surface } = await registry.createWorkspace({
      ...p,
      title: p.name,
      name: p.pane_name,
    });
    // `prompt` is typed once the program is ready, as workspace.up does (never submitted).
    if (p.prompt !== undefined) prefillPrompt(ctx, surface, p.prompt);
    return { ...registry.describeWorkspace(workspace), surface_id: surface.id };
  },
  "workspace.select": ({ registry }, p) => registry.describeWorkspace(registry.select(p.index)),
  "workspace.rename": ({ registry }, p) => {
    const ws = registry.workspaceAt(p.index);
    ws.title = p.name;
    return registry.describeWorkspace(ws);
  },
  "workspace.close": async ({ registry }, p) => {
    const ws = registry.workspaceAt(p.index);
    const index = registry.indexOf(ws);
    await registry.closeWorkspace(ws);
    return { closed: index };
  },
  "workspace.up": (ctx, p) => workspaceUp(ctx, p),
  "workspace.restore_layout": async ({ registry }, p) => {
    const ws = registry.workspaceAt(p.index);
    await registry.restoreLayout(ws, p.layout);
    return registry.describeWorkspace(ws);
  },
};
