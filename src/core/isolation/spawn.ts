/**
 * A pane's program starts with exactly its own terminal (descriptors 0, 1
 * and 2 on its PTY slave) and nothing else of the host.
 *
 * node-pty opens each PTY master without O_CLOEXEC, and the pane workers
 * fork concurrently, so another pane's program (or a child the host
 * starts) can inherit a master before anything marks it close-on-exec.
 * Two layers close that hole:
 *
 * - {@link closeOnExecAll}: after every spawn the worker marks every
 *   descriptor of the process close-on-exec (fcntl through FFI; the
 *   descriptor table is the whole process's, so one sweep covers what every
 *   thread opened).
 * - {@link wrapSpawn}: the pane's program is started through a small shell
 *   step that closes every descriptor above 2 before it execs the program:
 *   whatever the fork inherited (a master another worker opened a
 *   microsecond earlier) is gone before the program runs. bash is used
 *   because dash cannot name descriptors above 9 in a redirection.
 *
 * @module
 */

/** Where the shell that closes the inherited descriptors lives, or null when there is no bash. */
const BASH = firstFile(["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]);

/** The first of `paths` that is a file, or null. */
export function firstFile(paths: string[]): string | null {
  return paths.find((p) => {
    try {
      return Deno.statSync(p).isFile;
    } catch {
      return false;
    }
  }) ?? null;
}

/**
 * Closes every descriptor above 2 (bash expands the glob from a directory
 * descriptor it has closed again by then: closing it is a no-op), then
 * execs the program with its arguments, found on PATH as node-pty would.
 * `-p`: no BASH_ENV file and no functions imported from the environment
 * run before the exec.
 *
 * The program gets the environment it was given, not bash's version of it:
 * a non-interactive bash drops PS1 and PS2 and adds PWD and SHLVL, so
 * {@link wrapSpawn} passes PS1/PS2 under other names and says which of
 * PWD/SHLVL were absent.
 */
const CLOSE_AND_EXEC = [
  // Started by ../pane/host_pty.ts: the terminal is opened by name (and so becomes the new
  // session's controlling terminal).
  'if [ -n "${PANEFLOW_WRAP_TTY+x}" ]; then exec 0<>"$PANEFLOW_WRAP_TTY" 1>&0 2>&0; unset PANEFLOW_WRAP_TTY; fi',
  'for f in /dev/fd/*; do n=${f##*/}; if ((n > 2)); then eval "exec $n>&-"; fi; done',
  'if [ -n "${PANEFLOW_WRAP_PS1+x}" ]; then export PS1="$PANEFLOW_WRAP_PS1"; fi',
  'if [ -n "${PANEFLOW_WRAP_PS2+x}" ]; then export PS2="$PANEFLOW_WRAP_PS2"; fi',
  "for v in $PANEFLOW_WRAP_UNSET; do unset $v; done",
  "unset PANEFLOW_WRAP_PS1 PANEFLOW_WRAP_PS2 PANEFLOW_WRAP_UNSET",
  'exec "$@"',
].join("\n");

/** The argv[0] the wrapper shows until its exec (in `ps`, for a moment). */
export const WRAPPER_NAME = "paneflow-pane";

/**
 * The file, arguments and environment that start `file args` with only
 * descriptors 0-2 and `env`; with `tty`, descriptors 0-2 are that terminal,
 * opened by the wrapper.
 */
export function wrapSpawn(
  file: string,
  args: string[],
  env: Record<string, string>,
  tty?: string,
): { file: string; args: string[]; env: Record<string, string> } {
  if (!BASH) return { file, args, env };
  const wrapEnv: Record<string, string> = { ...env };
  if (tty !== undefined) wrapEnv.PANEFLOW_WRAP_TTY = tty;
  if ("PS1" in env) wrapEnv.PANEFLOW_WRAP_PS1 = env.PS1;
  if ("PS2" in env) wrapEnv.PANEFLOW_WRAP_PS2 = env.PS2;
  wrapEnv.PANEFLOW_WRAP_UNSET = ["PWD", "SHLVL", "OLDPWD"].filter((v) => !(v in env)).join(" ");
  return { file: BASH, args: ["-p", "-c", CLOSE_AND_EXEC, WRAPPER_NAME, file, ...args], env: wrapEnv };
}

/** Whether {@link wrapSpawn} can close inherited descriptors on this system. */
export function canWrap(): boolean {
  return BASH !== null;
}

const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

type Fcntl = Deno.DynamicLibrary<{
  fcntl: { parameters: ["i32", "i32", "i32"]; result: "i32" };
}>;
let libc: Fcntl | null | undefined;

function openLibc(): Fcntl | null {
  if (libc !== undefined) return libc;
  try {
    libc = Deno.dlopen(Deno.build.os === "darwin" ? "libSystem.B.dylib" : "libc.so.6", {
      fcntl: { parameters: ["i32", "i32", "i32"], result: "i32" },
    }) as Fcntl;
  } catch {
    libc = null;
  }
  return libc;
}

/** The process's open descriptors above 2. */
function openDescriptors(): number[] {
  const fds: number[] = [];
  try {
    for (const e of Deno.readDirSync(Deno.build.os === "linux" ? "/proc/self/fd" : "/dev/fd")) {
      const n = Number(e.name);
      if (Number.isInteger(n) && n > 2) fds.push(n);
    }
  } catch { /* no /proc: nothing to sweep */ }
  return fds;
}

/** Marks every descriptor above 2 close-on-exec; returns how many needed it. */
export function closeOnExecAll(): number {
  const c = openLibc();
  if (!c) return 0;
  let fixed = 0;
  for (const fd of openDescriptors()) {
    const flags = c.symbols.fcntl(fd, F_GETFD, 0);
    if (flags < 0 || flags & FD_CLOEXEC) continue;
    if (c.symbols.fcntl(fd, F_SETFD, flags | FD_CLOEXEC) === 0) fixed++;
  }
  return fixed;
}
