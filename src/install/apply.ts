// Carries out a plan: file steps (atomic writes, removals only of files still matching their
// recorded hash) and client steps. The manifest is rewritten from what actually happened, also when
// a step fails half way, so the next run still knows which files are ours.
import { copyFile, chmod, rename, rm, rmdir } from "node:fs/promises"
import { dirname } from "node:path"
import { writeAtomic } from "../util/fs"
import type { Run } from "../util/process"
import { codexConfigFile, type ClientHomes } from "./homes"
import { registerClaude, unregisterClaude } from "./integrations/claude"
import { removeCodexEntry, upsertCodexEntry } from "./integrations/codex"
import type { ManagedFile } from "./manifest"
import { fileMode, readText } from "./observe"
import type { ClientStep, DesiredFile, FileStep } from "./plan"

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
      return
    }
    dir = dirname(dir)
  }
}

/** Applies file steps; `recorded` (path → entry) is updated as each one succeeds. */
export async function applyFiles(steps: FileStep[], recorded: Map<string, ManagedFile>, stops: string[]): Promise<void> {
  for (const step of steps) {
    if (step.action === "remove") {
      await rm(step.path, { force: true })
      recorded.delete(step.path)
      await pruneDirs(dirname(step.path), stops)
    } else if (step.action === "leave") recorded.delete(step.path)
  }
  for (const step of steps) {
    if (step.action !== "write" && step.action !== "keep") continue
    if (step.action === "write") await writeFile(step.file)
    recorded.set(step.file.path, { path: step.file.path, sha256: step.file.sha256, owner: step.file.owner })
  }
}

async function editCodex(homes: ClientHomes, file: string | undefined, edit: (text: string, file: string) => string): Promise<void> {
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
    if (step.client === "codex") await editCodex(deps.homes, undefined, (text, file) => upsertCodexEntry(text, step.entry, file))
    else if (deps.claude) await registerClaude(deps.run, deps.claude, step.entry, deps.env)
  }
}
