// The readiness conditions a delegation needs, decided once and shared: doctor reports each as a check,
// and serve refuses a delegation (before any record, lock or session) on the first one that fails, with
// the same detail and the same one-line fix. A condition added here is one both of them hold.
import { roleModels, type Config, type Role } from "../../config/schema"
import { AppError, fail } from "../../errors"
import type { CatalogModel } from "../../opencode/catalog"
import { blockingPlaces, blockingText, opencodeConfigDirs } from "../../opencode/config-files"
import { bwrapFinding, launcherFinding, type Launchers } from "../../sandbox"
import { checkStateSpace } from "../../util/fs"

export interface Readiness {
  id: string
  ok: boolean
  detail: string
  /** One line: what to do. */
  fix?: string
}

/** The state dir takes a task's record: writable, with room. */
export async function stateDirReadiness(stateDir: string): Promise<Readiness> {
  try {
    await checkStateSpace(stateDir)
    return { id: "state-dir", ok: true, detail: `${stateDir} is writable` }
  } catch (error) {
    if (!(error instanceof AppError)) throw error
    return {
      id: "state-dir",
      ok: false,
      detail: error.message,
      fix: (error.hint ?? "").replace(/; nothing was started\.$/, "."),
    }
  }
}

/**
 * bwrap is present, executable and not affected by GHSA-pxhw-h44j-8pfx. One finding whatever is wrong
 * with it: nothing that runs bwrap can say more until it is fixed.
 */
export async function bwrapReadiness(bwrap: string): Promise<Readiness> {
  const found = await bwrapFinding(bwrap)
  return { id: "bwrap", ok: found.ok, detail: found.detail, fix: found.fix }
}

/** The launchers the sandbox starts by absolute path (a copy elsewhere on PATH does not count). */
export const LAUNCHER_NAMES = ["bash", "python3", "git"] as const

export async function launcherReadiness(name: (typeof LAUNCHER_NAMES)[number], path: string): Promise<Readiness> {
  const found = await launcherFinding(name, path)
  return { id: `launcher:${name}`, ok: found.ok, detail: found.detail, fix: found.fix }
}

/** OpenCode's config dirs hold nothing it would wait on forever at start (config-files.ts). */
export async function opencodeConfigReadiness(dirs: readonly string[]): Promise<Readiness> {
  const blocking = await blockingPlaces(dirs)
  if (!blocking.length)
    return { id: "opencode-config", ok: true, detail: `nothing OpenCode would wait on in ${dirs.join(", ")}` }
  const { problem, fix } = blockingText(blocking)
  return { id: "opencode-config", ok: false, detail: problem, fix: `${fix}.` }
}

/** The host conditions every delegation needs, in report order. */
const hostReadiness = (input: { stateDir: string; launchers: Launchers; opencodeDirs: readonly string[] }) =>
  Promise.all([
    ...LAUNCHER_NAMES.map((name) => launcherReadiness(name, input.launchers[name])),
    bwrapReadiness(input.launchers.bwrap),
    stateDirReadiness(input.stateDir),
    opencodeConfigReadiness(input.opencodeDirs),
  ])

/**
 * Refuses, before anything is written, when one of the host's conditions fails: what every start and
 * continue passes first (its launchers, bwrap, the state dir, OpenCode's config dirs).
 */
export async function refuseHostUnready(host: {
  paths: { stateDir: string; opencodeConfigDir: string; home: string }
  launchers: Launchers
}): Promise<void> {
  const opencodeDirs = opencodeConfigDirs(host.paths.opencodeConfigDir, host.paths.home)
  refuseUnready(await hostReadiness({ stateDir: host.paths.stateDir, launchers: host.launchers, opencodeDirs }))
}

/**
 * The model config.json routes `role` to, against the models OpenCode lists. A typo there is the
 * config's, so the fix names the key and the reinstall that renders the agents from it again.
 */
export function configModelReadiness(
  role: Role,
  config: Config,
  models: readonly CatalogModel[],
  configFile: string,
): Readiness {
  const ids = roleModels(config, role)
  const variant = config.modelVariants[role]
  if (ids.length === 0) return { id: `model:${role}`, ok: true, detail: "OpenCode's default model" }
  const reinstall = "then run `opencode-mcp-orchestrator install --yes` to render the agents from it."
  // Every route of a list is checked: a fallback to a model OpenCode does not list would only fail later.
  const absent = ids.find((id) => !models.some((m) => m.id === id))
  const id = absent ?? ids[0]!
  const model = models.find((m) => m.id === id)
  if (!model) {
    const [provider = "", name = ""] = [id.slice(0, id.indexOf("/")), id.slice(id.indexOf("/") + 1)]
    const near = models.filter((m) => m.id.startsWith(`${provider}/`) || (name && m.id.includes(name))).slice(0, 5)
    return {
      id: `model:${role}`,
      ok: false,
      detail:
        `config.json routes ${role} to "${id}", which OpenCode does not ` +
        `list${near.length ? ` (near: ${near.map((m) => m.id).join(", ")})` : ""}.`,
      fix: `Set models.${role} in ${configFile} to an id \`opencode models\` lists, ${reinstall}`,
    }
  }
  if (variant && !model.variants.includes(variant))
    return {
      id: `model:${role}`,
      ok: false,
      detail:
        `config.json gives ${role} the variant "${variant}", which ${id} does not have (it has: ` +
        `${model.variants.join(", ") || "none"}).`,
      fix: `Set modelVariants.${role} in ${configFile} to a listed variant (or remove it), ${reinstall}`,
    }
  const rest = ids.length > 1 ? `, then ${ids.slice(1).join(", ")}` : ""
  return { id: `model:${role}`, ok: true, detail: `${id}${variant ? ` (${variant})` : " (default variant)"}${rest}` }
}

/** Serve's side: the first failed condition as the error a tool returns (isError, with the fix as next). */
export function refuseUnready(findings: readonly Readiness[]): void {
  const failed = findings.find((finding) => !finding.ok)
  if (!failed) return
  const kind =
    failed.id === "bwrap" || failed.id.startsWith("launcher:") || failed.id === "opencode-config"
      ? "Prerequisite"
      : failed.id.startsWith("model:")
        ? "Config"
        : "Server"
  throw fail(
    kind,
    `Not ready to delegate: ${failed.detail}`,
    `${failed.fix ?? "Run `opencode-mcp-orchestrator doctor`."} Nothing was started.`,
    { readiness: failed.id },
  )
}
