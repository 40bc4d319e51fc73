// The check's definition as it was before the worker (definitions.ts says which files): taken when a
// task with `verify` starts, kept beside the task's record, and used by the verification to grade on
// those files whatever the worker made of them. Two files per task in the frozen dir: `<task>.tar`, the
// definition files copied by tar in a sandbox that sees the workspace read-only (a symlink stays a
// symlink, nothing outside the workspace is read), and `<task>.json`, each file's fingerprint
// (changes.ts) so the verification can name what changed. Both are written under a temporary name and
// renamed, the archive first: a process killed while freezing leaves a `.tmp-` file (swept) and no
// manifest, which the verification reports as "not frozen" rather than trusting a half archive.
import { lstatSync } from "node:fs"
import { lstat, mkdir, readdir, rename, rm, stat } from "node:fs/promises"
import { z } from "zod"
import { describe } from "../../errors"
import { hostFs, planSandbox, runSandboxed, type HostContext } from "../../sandbox"
import { alive } from "../../util/process"
import { readStateFile } from "../../util/state-file"
import { fingerprint } from "./changes"
import { definitionMatcher, type DefinitionSelection } from "./definitions"
import { findRepository, sandboxedGit } from "../git"

/** A definition larger than this is not frozen (the result says so): a check, not a data set. */
export const FROZEN_LIMITS = { files: 10_000, bytes: 64 * 1024 * 1024, walk: 100_000 } as const
/** Folders a walk outside Git skips: dependencies and metadata, never the check's definition. */
const UNWALKED = new Set([".git", "node_modules"])

const ManifestSchema = z.object({
  version: z.literal(1),
  /** Workspace-relative path → fingerprint (changes.ts) at the task's start. */
  files: z.record(z.string(), z.string()),
  /** Set when nothing could be frozen, saying why; the verification then grades the tree as left. */
  unfrozen: z.string().optional(),
})
export type FrozenManifest = z.infer<typeof ManifestSchema>

export const frozenFiles = (dir: string, taskID: string) => ({
  archive: `${dir}/${taskID}.tar`,
  manifest: `${dir}/${taskID}.json`,
})

/**
 * The workspace's files, relative: tracked and untracked-not-ignored when it is in a repository (what
 * git would call the project; build output and dependencies are ignored there), else a bounded walk that
 * skips `.git` and `node_modules`. Links are listed, never followed.
 */
async function projectFiles(workspace: string, host: HostContext): Promise<string[]> {
  const repository = findRepository(workspace, host)
  if (repository) {
    const listed = await sandboxedGit(
      repository,
      host,
      ["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
      { cwd: workspace },
    )
    if (listed?.code === 0) return [...new Set(listed.stdout.split("\0").filter(Boolean))]
  }
  const found: string[] = []
  let seen = 0
  const walk = async (rel: string) => {
    // A folder that cannot be read (removed meanwhile, no permission) has nothing to list.
    const entries = await readdir(rel ? `${workspace}/${rel}` : workspace, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      if (++seen > FROZEN_LIMITS.walk) throw new Error(`more than ${FROZEN_LIMITS.walk} entries in the workspace`)
      const path = rel ? `${rel}/${entry.name}` : entry.name
      if (entry.isDirectory()) {
        if (!UNWALKED.has(entry.name)) await walk(path)
      } else found.push(path)
    }
  }
  await walk("")
  return found
}

/** True when no folder between the workspace and `path` is a link or missing (a read must not follow one). */
function plainParents(workspace: string, path: string): boolean {
  const parts = path.split("/").slice(0, -1)
  for (let i = 1; i <= parts.length; i++) {
    const info = lstatSync(`${workspace}/${parts.slice(0, i).join("/")}`, { throwIfNoEntry: false })
    if (!info?.isDirectory()) return false
  }
  return true
}

/** The definition files in the workspace now, each with its fingerprint; a file below a link is "below-link". */
export async function definitionState(
  workspace: string,
  host: HostContext,
  selection: DefinitionSelection,
): Promise<Record<string, string>> {
  const isDefinition = definitionMatcher(selection)
  const paths = (await projectFiles(workspace, host)).filter(isDefinition)
  if (paths.length > FROZEN_LIMITS.files)
    throw new Error(`${paths.length} definition files, over the limit of ${FROZEN_LIMITS.files}`)
  const state: Record<string, string> = {}
  for (const path of paths.sort())
    state[path] = plainParents(workspace, path) ? await fingerprint(`${workspace}/${path}`) : "below-link"
  return state
}

export interface FreezeInput {
  workspace: string
  host: HostContext
  dir: string
  taskID: string
  selection: DefinitionSelection
}

/** Freezes the definition for a task; never rejects: what cannot be frozen is written down as such. */
export async function freezeDefinition(input: FreezeInput): Promise<void> {
  const { archive, manifest } = frozenFiles(input.dir, input.taskID)
  const temp = (file: string) => `${file}.tmp-${process.pid}`
  let written: FrozenManifest
  await mkdir(input.dir, { recursive: true, mode: 0o700 })
  try {
    const files = await definitionState(input.workspace, input.host, input.selection)
    const present = Object.keys(files).filter((path) => files[path] !== "absent" && files[path] !== "below-link")
    await archiveFiles(input.workspace, input.host, present, temp(archive))
    await rename(temp(archive), archive)
    written = { version: 1, files }
  } catch (error) {
    await rm(temp(archive), { force: true })
    written = { version: 1, files: {}, unfrozen: describe(error) }
  }
  await Bun.write(temp(manifest), JSON.stringify(written))
  await rename(temp(manifest), manifest)
}

/** tar of `paths` (relative) from the workspace, read-only in the runner's sandbox, into `target` on the host. */
async function archiveFiles(workspace: string, host: HostContext, paths: string[], target: string) {
  const plan = planSandbox(
    { profile: { kind: "runner", workspace: "read_only", network: "disabled" }, workspace, host },
    hostFs,
  )
  // stdout is the archive and the log is its only copy: tar's messages go nowhere, its exit code says.
  // --verbatim-files-from: a listed name starting with "-" is a name, not an option.
  const script = 'tar -C "$1" --null --verbatim-files-from --no-recursion -T - -cf - 2>/dev/null'
  const result = await runSandboxed(plan, ["sh", "-c", script, "sh", workspace], {
    timeoutMs: 120_000,
    maxOutputBytes: 0,
    stdin: paths.length ? `${paths.join("\0")}\0` : "",
    logFile: target,
    logLimitBytes: FROZEN_LIMITS.bytes,
  })
  if (result.failure) throw new Error(`the sandbox could not start (${result.failure.code}): ${result.failure.detail}`)
  if (result.exitCode !== 0) throw new Error(`tar exited ${result.exitCode} reading the definition files`)
  if ((result.log?.bytesSeen ?? 0) > FROZEN_LIMITS.bytes)
    throw new Error(`the definition files take more than ${FROZEN_LIMITS.bytes} bytes`)
}

export type Frozen =
  | { kind: "frozen"; manifest: FrozenManifest; archive: Uint8Array }
  | { kind: "unfrozen"; why: string }

/** A task's frozen definition; a missing, damaged or unfrozen one says why, never throws. */
export async function readFrozen(dir: string, taskID: string): Promise<Frozen> {
  const files = frozenFiles(dir, taskID)
  // A damaged manifest is set aside (state-file.ts) and reads as absent: graded as left, said so.
  const manifest = await readStateFile(files.manifest, ManifestSchema, "It is remade by the task's next start.").catch(
    () => undefined,
  )
  if (!manifest) return { kind: "unfrozen", why: "its record of the definition files is missing or damaged" }
  if (manifest.unfrozen) return { kind: "unfrozen", why: manifest.unfrozen }
  // No archive reads as a size of -1: the definition is reported unfrozen.
  const size = await stat(files.archive).then(
    (info) => info.size,
    () => -1,
  )
  if (size < 0 || size > FROZEN_LIMITS.bytes + 4096)
    return { kind: "unfrozen", why: "its archive is missing or damaged" }
  return { kind: "frozen", manifest, archive: await Bun.file(files.archive).bytes() }
}

/** The definition files whose fingerprint differs from the frozen one (added, changed or removed), sorted. */
export function changedDefinition(frozen: Record<string, string>, now: Record<string, string>): string[] {
  const paths = new Set([...Object.keys(frozen), ...Object.keys(now)])
  return [...paths].filter((path) => (frozen[path] ?? "absent") !== (now[path] ?? "absent")).sort()
}

/**
 * The folders above `paths`, shallowest first: the restore replaces any that became a link or a file
 * (a worker's `test -> /elsewhere` must not carry the restore out, even into the sandbox's read-only view).
 */
export function parentsOf(paths: readonly string[]): string[] {
  const parents = new Set<string>()
  for (const path of paths) {
    const parts = path.split("/")
    for (let i = 1; i < parts.length; i++) parents.add(parts.slice(0, i).join("/"))
  }
  return [...parents].sort((a, b) => a.split("/").length - b.split("/").length || a.localeCompare(b))
}

/**
 * Shell run in the verification's sandbox, in the workspace seen through a tmpfs overlay: replaces each
 * parent that is not a folder, removes every changed definition path, unpacks the frozen archive from
 * stdin, then runs the command. Arguments: the parents, `--`, the changed paths, `--`, the command. A
 * restore that fails exits 90 or 91 with its reason in the log, and the command never runs: a failing grade.
 */
export const RESTORE_SCRIPT =
  'while [ "$1" != -- ]; do if [ -L "$1" ] || { [ -e "$1" ] && [ ! -d "$1" ]; }; then rm -f -- "$1" || exit 90; fi; ' +
  'shift; done; shift; while [ "$1" != -- ]; do rm -rf -- "$1" || exit 90; shift; done; shift; ' +
  'tar --no-same-owner -xf - || { echo "restoring the frozen definition failed" >&2; exit 91; }; ' +
  'exec /bin/bash -c "$1"'

/** A task's record is first saved just after its freeze: files younger than this are never swept. */
const SWEEP_GRACE_MS = 60 * 60 * 1000

/**
 * Removes the frozen files of tasks whose record is gone (retention removed it) and the leftovers of
 * freezes whose process was killed; `keep` says whether a task's record exists.
 */
export async function sweepFrozen(
  dir: string,
  keep: (taskID: string) => Promise<boolean>,
  now = Date.now(),
): Promise<number> {
  let removed = 0
  // No frozen dir yet: nothing to sweep.
  const names = await readdir(dir).catch(() => [] as string[])
  for (const name of names) {
    const taskID = name.replace(/\.(tar|json)(\.tmp-\d+)?$/, "")
    if (taskID === name) continue
    const killed = name.includes(".tmp-") && !alive(Number(name.slice(name.lastIndexOf(".tmp-") + 5)))
    // Gone meanwhile: another pass removed it.
    const info = await lstat(`${dir}/${name}`).catch(() => undefined)
    if (!info || (!killed && now - info.ctimeMs < SWEEP_GRACE_MS)) continue
    if (!killed && (await keep(taskID))) continue
    await rm(`${dir}/${name}`, { force: true })
    removed++
  }
  return removed
}
