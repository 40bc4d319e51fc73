// Reads what is there now: hashes of the files an install wants or recorded, and the MCP entries
// the clients hold. The only input the pure planner gets from the disk.
import { stat } from "node:fs/promises"
import { codexConfigFile, claudeJsonFile, type ClientHomes } from "./homes"
import { readClaudeEntry } from "./integrations/claude"
import { readCodexEntry } from "./integrations/codex"
import { hashFile, type InstallManifest } from "./manifest"
import type { Observed } from "./plan"

export async function readText(file: string): Promise<string | undefined> {
  const handle = Bun.file(file)
  return (await handle.exists()) ? handle.text() : undefined
}

export async function observe(
  homes: ClientHomes,
  manifest: InstallManifest | undefined,
  paths: string[],
): Promise<Observed> {
  const all = [...new Set([...paths, ...(manifest?.files ?? []).map((f) => f.path)])]
  const hashes = await Promise.all(all.map(async (path) => [path, await hashFile(path)] as const))
  const codexFile = manifest?.registrations.codex?.configFile ?? codexConfigFile(homes)
  const codexText = await readText(codexFile)
  return {
    manifest,
    onDisk: Object.fromEntries(hashes),
    codexEntry: codexText === undefined ? undefined : readCodexEntry(codexText, codexFile),
    claudeEntry: await readClaudeEntry(claudeJsonFile(homes)),
  }
}

export async function fileMode(path: string): Promise<number | undefined> {
  try {
    return (await stat(path)).mode & 0o777
  } catch {
    // Absent: no mode to report.
    return undefined
  }
}
