// The bwrap command line for a plan. Pure: the plan was checked when it was made; this only spells it.
import type { Mount } from "./mounts"
import type { SandboxPlan } from "./plan"

export const BWRAP = "/usr/bin/bwrap"

/**
 * Isolation flags every sandbox gets. `--unshare-user --disable-userns`: the command cannot create a
 * nested user namespace (where it would regain capabilities over its own mounts). `--cap-drop ALL`: a
 * root caller's command otherwise keeps CAP_SYS_ADMIN and can unmount the read-only binds.
 * `--new-session`: no TIOCSTI injection into the caller's terminal. `--die-with-parent`: killing bwrap
 * kills the sandbox's pid namespace, and with it every background child.
 */
export const ISOLATION_FLAGS = [
  "--unshare-all",
  "--unshare-user",
  "--disable-userns",
  "--die-with-parent",
  "--new-session",
  "--cap-drop",
  "ALL",
  "--clearenv",
] as const

export function mountArgs(mount: Mount): string[] {
  switch (mount.op) {
    case "bind":
    case "ro-bind":
      return [`--${mount.op}`, mount.source, mount.dest]
    case "tmp-overlay":
      return ["--overlay-src", mount.source, "--tmp-overlay", mount.dest]
    case "symlink":
      return ["--symlink", mount.target, mount.dest]
    case "tmpfs":
      return [...(mount.size ? ["--size", String(mount.size)] : []), "--tmpfs", mount.dest]
    case "dir":
    case "proc":
    case "dev":
    case "remount-ro":
      return [`--${mount.op}`, mount.dest]
  }
}

/** Everything after `/usr/bin/bwrap`, ending with `--` and the command's own argv. */
export function bwrapArgs(plan: SandboxPlan, command: readonly string[]): string[] {
  if (command.length === 0 || command[0] === "") throw new Error("bwrapArgs: empty command")
  const args: string[] = [...ISOLATION_FLAGS]
  // --unshare-all includes the network; host mode re-shares it and nothing else.
  if (plan.network === "host") args.push("--share-net")
  for (const [name, value] of Object.entries(plan.env).sort(([a], [b]) => a.localeCompare(b)))
    args.push("--setenv", name, value)
  for (const mount of plan.mounts) args.push(...mountArgs(mount))
  args.push("--chdir", plan.cwd, "--", ...command)
  return args
}
