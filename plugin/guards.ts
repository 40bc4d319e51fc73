// What `tool.execute.before` refuses for orchestrator agents, decided from the call alone: the
// built-in bash (every shell goes through the sandbox), any edit or write whose target is Git
// metadata (a `.git` component, or what a `.git` file's `gitdir:` points to) or lies outside the
// workspace once symlinks are resolved, and any read that leaves the workspace the same way. Permission rules
// say the same; this holds even if an agent
// file is edited or OpenCode's rule matching changes.
import { isAbsolute, relative, resolve } from "node:path"
import { AppError } from "../src/errors"
import {
  autorunHitIn,
  describeHit,
  gitMetadataPaths,
  repositoryPrefixes,
  pathRules,
  type FsView,
  type HostContext,
} from "../src/sandbox"
import { isInside } from "../src/sandbox/host-paths"
import { patchTargets } from "./files/text"

/** Built-in tools that write files, and where their target paths are. */
export const WRITE_TOOLS = new Set(["edit", "write", "multiedit", "patch", "apply_patch"])

export function writeTargets(args: Record<string, unknown>): string[] {
  const targets: string[] = []
  for (const key of ["filePath", "file_path", "path"])
    if (typeof args[key] === "string") targets.push(args[key] as string)
  for (const key of ["patchText", "patch", "input"])
    if (typeof args[key] === "string") targets.push(...patchTargets(args[key] as string))
  return targets
}

/**
 * The canonical form of a path that may not exist yet: its deepest existing ancestor resolved, the
 * rest appended. A dangling symlink on the way has no canonical form (undefined): writing through it
 * would create its target wherever it points, outside any check.
 */
export function canonicalTarget(path: string, fs: FsView): string | undefined {
  const parts = path.split("/").filter(Boolean)
  for (let depth = parts.length; depth >= 0; depth--) {
    const head = `/${parts.slice(0, depth).join("/")}`
    const real = fs.realpath(head)
    if (real) return [real === "/" ? "" : real, ...parts.slice(depth)].join("/") || "/"
    if (fs.lstat(head) === "symlink") return undefined
  }
  return undefined
}

export interface GuardInput {
  tool: string
  args: Record<string, unknown>
  workspace: string
  host: HostContext
}

/** Built-in tools that read, and the argument holding their path (absent: the workspace itself). */
export const READ_TOOLS = new Set(["read", "list", "grep", "glob"])

/** A read through a symlink (one the repository ships, or one a worker made) must not leave the workspace. */
function refuseRead(input: GuardInput, workspace: string, fs: FsView): string | undefined {
  for (const key of ["filePath", "file_path", "path"]) {
    const target = input.args[key]
    if (typeof target !== "string" || !target) continue
    const absolute = isAbsolute(target) ? resolve(target) : resolve(workspace, target)
    const canonical = canonicalTarget(absolute, fs)
    if (!canonical || !isInside(canonical, workspace))
      return `${input.tool} ${target}: the path is outside the workspace ${workspace} once symlinks are resolved.`
  }
  return undefined
}

/** Why this call must not run, or undefined. */
export function refuseCall(input: GuardInput, fs: FsView): string | undefined {
  if (input.tool === "bash")
    return (
      "The built-in bash tool is disabled for orchestrator agents; " +
      "use your sandbox tool (sandbox_shell, or the runner's sandbox_run*) instead."
    )
  const workspace = fs.realpath(input.workspace) ?? input.workspace
  if (READ_TOOLS.has(input.tool)) return refuseRead(input, workspace, fs)
  if (!WRITE_TOOLS.has(input.tool)) return undefined
  const targets = writeTargets(input.args)
  if (!targets.length) return `${input.tool}: no target path found in the call, so it cannot be checked; refused.`
  let metadata: string[]
  try {
    metadata = gitMetadataPaths(workspace, pathRules(input.host.home, input.host.credentials, fs), fs)
  } catch (error) {
    return error instanceof AppError ? error.message : String(error)
  }
  for (const target of targets) {
    const absolute = isAbsolute(target) ? resolve(target) : resolve(workspace, target)
    if (absolute.split("/").includes(".git") || target.split("/").includes(".git"))
      return `${input.tool} ${target}: Git metadata is read-only for orchestrator agents.`
    const canonical = canonicalTarget(absolute, fs)
    if (!canonical || !isInside(canonical, workspace))
      return `${input.tool} ${target}: the path is outside the workspace ${workspace}.`
    if (metadata.some((path) => isInside(canonical, path)))
      return `${input.tool} ${target}: the path is Git metadata (${metadata.join(", ")}); it is read-only.`
    const prefix = repositoryPrefixes(workspace, fs)
    const hit = [relative(workspace, canonical), relative(workspace, absolute)]
      .map((path) => autorunHitIn(prefix, path))
      .find((found) => found && !found.content)
    if (hit) return autorunRefusal(input.tool, target, describeHit(hit))
  }
  return undefined
}

/** The refusal of a write to a file that runs or instructs on its own; the file tools say the same. */
export const autorunRefusal = (tool: string, target: string, what: string) =>
  `${tool} ${target}: ${what} Such files are not written by delegated agents (created, changed or deleted); ` +
  "say in your report what should change there."
