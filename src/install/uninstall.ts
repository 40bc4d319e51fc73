// `uninstall`: removes our MCP registrations, then every file the manifest lists that still matches
// its recorded hash; a file edited since is left in place and reported. config.json stays unless
// --purge-config; the state and cache dirs stay, named with their sizes (left.ts).
import { rm } from "node:fs/promises"
import { dirname } from "node:path"
import type { Env } from "../config/flags"
import type { Paths } from "../config/paths"
import { timeoutLimits } from "../config/schema"
import { loadConfig } from "../config/load"
import type { Run } from "../util/process"
import { applyClients, applyFiles, pruneDirs } from "./apply"
import { findClient, pruneStops, type ClientHomes } from "./homes"
import { leftLines, measureLeft } from "./left"
import { clientState } from "./install"
import { readManifest, type ManagedFile } from "./manifest"
import { observe } from "./observe"
import { serveCommand } from "./payload"
import { planUninstall } from "./plan"
import { formatUninstallPlan } from "./report"
import { adoptManifest, formatSkipped, installScope } from "./scope"
import { describeRetired, retireSharedServer } from "./server"

export interface UninstallDeps {
  paths: Paths
  homes: ClientHomes
  env: Env
  run: Run
  print: (line: string) => void
}

export async function uninstall(
  deps: UninstallDeps,
  options: { purgeConfig?: boolean; dryRun?: boolean },
): Promise<number> {
  const { paths, homes, print } = deps
  const scope = installScope(paths, homes)
  const { manifest, skipped } = adoptManifest(await readManifest(paths.installManifest), scope, homes)
  for (const line of formatSkipped(skipped)) print(line)
  // A broken config.json must not block removing the program: what it would name is in the manifest too.
  const config = await loadConfig(paths.configFile).catch(() => undefined)
  const observed = await observe(homes, manifest, [])
  const entry = { ...serveCommand(paths), timeoutSec: config ? timeoutLimits(config).parent : 0 }
  const plan = planUninstall(observed, clientState(paths, entry, observed), !!options.purgeConfig)
  const claude = findClient(homes, "claude")
  if (!manifest)
    print(
      `No install manifest at ${paths.installManifest}: only registrations that point into ${paths.dataDir} are ` +
        `removed.`,
    )
  for (const line of formatUninstallPlan(plan, homes.home, !!claude, paths.configFile)) print(line)
  const left = await measureLeft(paths)
  if (options.dryRun) {
    for (const line of leftLines(left.dirs, left.patches, true)) print(line)
    print("Dry run: nothing was changed.")
    return 0
  }
  await applyClients(
    plan.clients,
    { homes, run: deps.run, env: deps.env, claude },
    manifest?.registrations.codex?.configFile,
  )
  const recorded = new Map<string, ManagedFile>((manifest?.files ?? []).map((f) => [f.path, f]))
  const stops = pruneStops(paths.dataDir, paths.opencodeConfigDir, homes)
  for (const line of formatSkipped(await applyFiles(plan.files, recorded, stops, scope))) print(line)
  await rm(paths.installManifest, { force: true })
  await pruneDirs(paths.current, [paths.dataDir])
  await pruneDirs(paths.dataDir, [dirname(paths.dataDir)])
  if (options.purgeConfig) {
    await rm(paths.configFile, { force: true })
    await pruneDirs(paths.configDir, [dirname(paths.configDir)])
  }
  const retired = describeRetired(await retireSharedServer(paths), "uninstall")
  if (retired) print(retired)
  const kept = plan.files.filter((step) => step.action === "leave")
  if (kept.length)
    print(
      `Left ${kept.length} locally modified file(s) in place (listed above as LEAVE); delete them yourself if you ` +
        `no longer want them.`,
    )
  for (const line of leftLines(left.dirs, left.patches, false)) print(line)
  print(
    options.purgeConfig
      ? "Uninstalled; configuration removed."
      : `Uninstalled; configuration kept at ${paths.configFile}.`,
  )
  return 0
}
