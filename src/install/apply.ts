// Carries out a plan: file steps (atomic writes, removals only of files still matching their
// recorded hash) and client steps. The manifest is rewritten from what actually happened, also when
// a step fails half way, so the next run still knows which files are ours.
import { copyFile, chmod, readdir, rename, rm, rmdir } from "node:fs/promises"
import { basename, dirname } from "node:path"
import { writeAtomic } from "../util/fs"
import type { Run } from "../util/process"
import { codexConfigFile, type ClientHomes } from "./homes"
import { registerClaude, unregisterClaude } from "./integrations/claude"
import { removeCodexEntry, upsertCodexEntry } from "./integrations/codex"
import type { ManagedFile } from "./manifest"
import { fileMode, readText } from "./observe"
import type { ClientStep, DesiredFile, FileStep } from "./plan"
import { removable, type InstallScope, type Skipped } from "./scope"

export interface ApplyDeps {
  homes: ClientHomes
  run: Run
  env: Record<string, string | undefined>
  /** Path of the `claude` CLI, when found. */
  claude: string | null
}

async function writeFile(file: DesiredFile): Promise<void> {
  if ("text" in file.source) return writeAtomic(file.path, file.source.text, file.mode)
  // Copy beside the target and rename over it: a running binary cannot be opened for writing, but
  // its directory entry can be replaced.
  await writeAtomic(`${file.path}.partial`, "")
  await copyFile(file.source.copy, `${file.path}.partial`)
  await chmod(`${file.path}.partial`, file.mode)
  await rename(`${file.path}.partial`, file.path)
}

/** Removes now-empty directories up to (not including) `stop`. */
export async function pruneDirs(from: string, stops: string[]): Promise<void> {
  let dir = from
  while (!stops.includes(dir) && dir !== "/" && dir.length > 1) {
    try {
      await rmdir(dir)
    } catch {
      // Not empty (or gone): pruning stops at the first directory that holds something.
      return
    }
    dir = dirname(dir)
  }
}

const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Removes what a killed install left beside `path`: the binary's `.partial` copy and writeAtomic's
 * `.<pid>.<ms>.tmp` files. Only names derived from a file this install manages, in its directory.
 */
async function removeLeftovers(path: string): Promise<void> {
  const leftover = new RegExp(`^${literal(basename(path))}(\\.partial)?(\\.\\d+\\.\\d+\\.tmp)?$`)
  const names = await readdir(dirname(path)).catch(() => [] as string[]) // no directory yet: nothing left there
  for (const name of names)
    if (name !== basename(path) && leftover.test(name)) await rm(`${dirname(path)}/${name}`, { force: true })
}

/**
 * Applies file steps; `recorded` (path → entry) is updated as each one succeeds. A removal is carried
 * out only inside `scope` (symlinks resolved); any other is skipped, dropped from the manifest and
 * returned with why.
 */
export async function applyFiles(
  steps: FileStep[],
  recorded: Map<string, ManagedFile>,
  stops: string[],
  scope: InstallScope,
): Promise<Skipped[]> {
  const skipped: Skipped[] = []
  // A recorded file no step names is neither wanted nor on disk (an earlier run removed it and was
  // killed before it rewrote the manifest): it is forgotten, not carried on as ours.
  const named = new Set(steps.map((step) => ("file" in step ? step.file.path : step.path)))
  for (const path of [...recorded.keys()]) if (!named.has(path)) recorded.delete(path)
  for (const step of steps) {
    if (step.action === "remove") {
      recorded.delete(step.path)
      if (!(await removable(scope, step.path))) {
        skipped.push({
          path: step.path,
          reason: "with symlinks resolved it lies outside the directories this install manages",
        })
        continue
      }
      await rm(step.path, { force: true })
      await pruneDirs(dirname(step.path), stops)
    } else if (step.action === "leave") recorded.delete(step.path)
  }
  for (const step of steps) {
    if (step.action !== "write" && step.action !== "keep") continue
    await removeLeftovers(step.file.path)
    if (step.action === "write") await writeFile(step.file)
    recorded.set(step.file.path, { path: step.file.path, sha256: step.file.sha256, owner: step.file.owner })
  }
  return skipped
}

async function editCodex(
  homes: ClientHomes,
  file: string | undefined,
  edit: (text: string, file: string) => string,
): Promise<void> {
  const target = file ?? codexConfigFile(homes)
  const before = (await readText(target)) ?? ""
  const after = edit(before, target)
  if (after !== before) await writeAtomic(target, after, (await fileMode(target)) ?? 0o600)
}

export async function applyClients(steps: ClientStep[], deps: ApplyDeps, codexFile?: string): Promise<void> {
  for (const step of steps) {
    if (step.action === "unregister") {
      if (step.client === "codex") await editCodex(deps.homes, codexFile, removeCodexEntry)
      else if (deps.claude) await unregisterClaude(deps.run, deps.claude, deps.env)
    }
  }
  for (const step of steps) {
    if (step.action !== "register") continue
    if (step.client === "codex")
      await editCodex(deps.homes, undefined, (text, file) => upsertCodexEntry(text, step.entry, file))
    else if (deps.claude) await registerClaude(deps.run, deps.claude, step.entry, deps.env)
  }
}
