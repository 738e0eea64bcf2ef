/**
 * Plugin manifests (TOML or JSON): the schema, ptywright's validation in its
 * order with its messages, and loading from disk with the entrypoint kept
 * inside the manifest's directory (ptywright's `PluginManifest`,
 * https://github.com/utensils/ptywright/blob/main/src/plugin.rs).
 *
 * @module
 */
import { z } from "zod";
import { describeZodError } from "../spec/protocol.ts";

/** Permission names, in the order `plugin.capabilities` lists them. */
export const PERMISSIONS = [
  "session.spawn",
  "session.kill",
  "session.resize",
  "screen.read",
  "transcript.read",
  "input.write",
  "matcher.wait",
] as const;
/** One permission a manifest may declare. */
export type Permission = (typeof PERMISSIONS)[number];

/** ptywright's Rust Debug name of a permission, used in its duplicate message. */
const DEBUG_NAME: Record<Permission, string> = {
  "session.spawn": "SessionSpawn",
  "session.kill": "SessionKill",
  "session.resize": "SessionResize",
  "screen.read": "ScreenRead",
  "transcript.read": "TranscriptRead",
  "input.write": "InputWrite",
  "matcher.wait": "MatcherWait",
};

const envMap = z.record(z.string(), z.string());

const DefaultTarget = z.object({
  program: z.string(),
  args: z.array(z.string()).optional(),
  rows: z.number().int().min(1).max(65535).optional(),
  cols: z.number().int().min(1).max(65535).optional(),
  env: envMap.optional(),
  required_env: envMap.optional(),
});

/** The manifest as parsed (before the semantic checks). */
export const ManifestSchema = z.object({
  name: z.string(),
  kind: z.enum(["adapter", "macro", "matcher"]),
  version: z.string(),
  runtime: z.enum(["lua", "wasm"]).nullable().optional(),
  entrypoint: z.string().nullable().optional(),
  permissions: z.array(z.enum(PERMISSIONS)).optional(),
  default_target: DefaultTarget.optional(),
});

/** A validated manifest in its wire form (`runtime`/`entrypoint` null when unset). */
export interface Manifest {
  name: string;
  kind: "adapter" | "macro" | "matcher";
  version: string;
  runtime: "lua" | "wasm" | null;
  entrypoint: string | null;
  permissions: Permission[];
  default_target?: z.infer<typeof DefaultTarget>;
}

/**
 * Parses and validates a manifest object. Throws an Error whose message is
 * ptywright's: a schema failure first, then the five checks in order.
 */
export function validateManifest(value: unknown): Manifest {
  const parsed = ManifestSchema.safeParse(value);
  if (!parsed.success) throw new Error(`invalid plugin manifest: ${describeZodError(parsed.error)}`);
  const m = parsed.data;
  if (!m.name.trim()) throw new Error("plugin name must not be empty");
  if (!m.version.trim()) throw new Error("plugin version must not be empty");
  const entry = m.entrypoint ?? null;
  if (m.runtime && !entry?.trim()) throw new Error("plugin runtime requires an entrypoint");
  if (entry !== null && !m.runtime) throw new Error("plugin entrypoint requires a runtime");
  const seen = new Set<Permission>();
  for (const p of m.permissions ?? []) {
    if (seen.has(p)) throw new Error(`duplicate plugin permission: ${DEBUG_NAME[p]}`);
    seen.add(p);
  }
  return {
    name: m.name,
    kind: m.kind,
    version: m.version,
    runtime: m.runtime ?? null,
    entrypoint: entry,
    permissions: m.permissions ?? [],
    ...(m.default_target ? { default_target: m.default_target } : {}),
  };
}

/** A manifest read from disk with its entrypoint resolved. */
export interface LoadedManifest {
  manifest: Manifest;
  /** The manifest file's canonical path. */
  path: string;
  /** The entrypoint's canonical path, inside the manifest's directory. */
  entrypoint: string;
  /** The entrypoint's source. */
  source: string;
}

const dirOf = (p: string) => p.slice(0, p.lastIndexOf("/")) || "/";

/**
 * Reads a manifest (`.json` is JSON, anything else TOML), validates it and
 * resolves its entrypoint. Every failure is an Error naming the file.
 */
export async function loadManifest(manifestPath: string): Promise<LoadedManifest> {
  let text: string;
  let real: string;
  try {
    real = await Deno.realPath(manifestPath);
    text = await Deno.readTextFile(real);
  } catch (e) {
    throw new Error(`cannot read plugin manifest ${manifestPath}: ${(e as Error).message}`, { cause: e });
  }
  let value: unknown;
  try {
    if (real.endsWith(".json")) value = JSON.parse(text);
    else value = (await import("smol-toml")).parse(text);
  } catch (e) {
    throw new Error(`${manifestPath}: ${(e as Error).message.split("\n")[0]}`, { cause: e });
  }
  let manifest: Manifest;
  try {
    manifest = validateManifest(value);
  } catch (e) {
    throw new Error(`${manifestPath}: ${(e as Error).message}`, { cause: e });
  }
  const entry = manifest.entrypoint;
  if (!entry) throw new Error(`${manifestPath}: plugin \`${manifest.name}\` has no entrypoint`);
  if (entry.startsWith("/") || entry.split(/[\\/]/).includes("..")) {
    throw new Error(
      `${manifestPath}: entrypoint \`${entry}\` must be a relative path inside the manifest's directory`,
    );
  }
  const dir = dirOf(real);
  let target: string;
  try {
    target = await Deno.realPath(`${dir}/${entry}`);
  } catch (e) {
    throw new Error(`${manifestPath}: cannot read entrypoint \`${entry}\`: ${(e as Error).message}`, {
      cause: e,
    });
  }
  if (!target.startsWith(dir + "/")) {
    throw new Error(`${manifestPath}: entrypoint \`${entry}\` escapes the manifest's directory`);
  }
  const source = await Deno.readTextFile(target);
  return { manifest, path: real, entrypoint: target, source };
}
