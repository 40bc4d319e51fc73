// Decides what an install or uninstall will do, from data alone: the files this version wants, what
// the earlier install recorded, what is on disk now, and the registrations found in the clients.
// Nothing here touches the disk; apply.ts carries a plan out.
import type { Config } from "../config/schema"
import type { InstallManifest, ManagedFile, Owner } from "./manifest"
import type { ClaudeEntry } from "./integrations/claude"
import type { CodexEntry, McpEntry } from "./integrations/codex"

export const INTEGRATIONS = ["codex", "claude"] as const
export type Integration = (typeof INTEGRATIONS)[number]

export interface DesiredFile {
  path: string
  owner: Owner
  sha256: string
  mode: number
  /** Text to write, or a file to copy (the binary). */
  source: { text: string } | { copy: string }
}

export type FileStep =
  | { action: "write"; file: DesiredFile; reason: "new" | "update" | "payload" }
  | { action: "keep"; file: DesiredFile }
  | { action: "preserve"; file: DesiredFile; reason: string }
  | { action: "remove"; path: string; owner: Owner }
  | { action: "leave"; path: string; owner: Owner; reason: string }

export type ClientStep =
  | { action: "register"; client: Integration; entry: McpEntry; replacing?: string }
  | { action: "unchanged"; client: Integration }
  | { action: "unregister"; client: Integration; reason: string }
  | { action: "foreign"; client: Integration; command: string }

export interface Observed {
  manifest?: InstallManifest
  /** sha256 of every path of interest on disk; null (or missing) when absent. */
  onDisk: Record<string, string | null>
  codexEntry?: CodexEntry
  claudeEntry?: ClaudeEntry
}

export interface ClientState {
  /** The entry we want, when the client is selected. */
  entry: McpEntry
  /** True when a found command belongs to this project (under its data directory). */
  isOurs: (command: string) => boolean
  matches: (client: Integration) => boolean
}

/** Desired files against the earlier manifest and the disk. Payload files (owner core) are ours outright. */
export function reconcileFiles(desired: DesiredFile[], observed: Observed): FileStep[] {
  const recorded = new Map((observed.manifest?.files ?? []).map((file) => [file.path, file]))
  const steps: FileStep[] = []
  for (const file of desired) {
    const disk = observed.onDisk[file.path] ?? null
    const before = recorded.get(file.path)
    if (disk === file.sha256) steps.push({ action: "keep", file })
    else if (disk === null) steps.push({ action: "write", file, reason: "new" })
    else if (file.owner === "core") steps.push({ action: "write", file, reason: "payload" })
    else if (before && before.sha256 === disk) steps.push({ action: "write", file, reason: "update" })
    else
      steps.push({
        action: "preserve",
        file,
        reason: before ? "modified since it was installed" : "exists and was not written by this installer",
      })
  }
  const wanted = new Set(desired.map((file) => file.path))
  for (const file of recorded.values()) {
    if (wanted.has(file.path)) continue
    const disk = observed.onDisk[file.path] ?? null
    if (disk === null) continue
    if (disk === file.sha256) steps.push({ action: "remove", path: file.path, owner: file.owner })
    else steps.push({ action: "leave", path: file.path, owner: file.owner, reason: "modified since it was installed" })
  }
  return steps
}

function found(client: Integration, observed: Observed): string | undefined {
  const entry = client === "codex" ? observed.codexEntry : observed.claudeEntry
  return entry && typeof entry.command === "string" ? entry.command : undefined
}

/** Selected clients are registered (or left when already right); deselected ones lose only our entry. */
export function reconcileClients(
  selected: Integration[],
  previous: Integration[],
  observed: Observed,
  state: ClientState,
  why = "deselected",
): ClientStep[] {
  const steps: ClientStep[] = []
  for (const client of INTEGRATIONS) {
    const command = found(client, observed)
    if (selected.includes(client)) {
      if (state.matches(client)) steps.push({ action: "unchanged", client })
      else
        steps.push({
          action: "register",
          client,
          entry: state.entry,
          replacing: command && !state.isOurs(command) ? command : undefined,
        })
      continue
    }
    if (command === undefined) continue
    if (!state.isOurs(command)) {
      if (previous.includes(client)) steps.push({ action: "foreign", client, command })
      continue
    }
    steps.push({
      action: "unregister",
      client,
      reason: previous.includes(client) ? why : "left by an earlier installation",
    })
  }
  return steps
}

export interface InstallPlan {
  config: Config
  files: FileStep[]
  clients: ClientStep[]
  /** What install-manifest.json will say once the plan is applied (installedAt is set then). */
  manifest: Omit<InstallManifest, "installedAt">
}

export function planInstall(input: {
  config: Config
  desired: DesiredFile[]
  observed: Observed
  previous: Integration[]
  clients: ClientState
  appVersion: string
  registrations: InstallManifest["registrations"]
}): InstallPlan {
  const files = reconcileFiles(input.desired, input.observed)
  const clients = reconcileClients(input.config.integrations, input.previous, input.observed, input.clients)
  const recorded: ManagedFile[] = files.flatMap((step) =>
    step.action === "write" || step.action === "keep"
      ? [{ path: step.file.path, sha256: step.file.sha256, owner: step.file.owner }]
      : [],
  )
  const registrations = Object.fromEntries(
    Object.entries(input.registrations).filter(([client]) => input.config.integrations.includes(client as Integration)),
  )
  return {
    config: input.config,
    files,
    clients,
    manifest: {
      version: 1,
      appVersion: input.appVersion,
      integrations: input.config.integrations,
      registrations,
      files: recorded,
    },
  }
}

export interface UninstallPlan {
  files: FileStep[]
  clients: ClientStep[]
  purgeConfig: boolean
}

export function planUninstall(observed: Observed, clients: ClientState, purgeConfig: boolean): UninstallPlan {
  const previous = observed.manifest?.integrations ?? []
  return {
    files: reconcileFiles([], observed),
    clients: reconcileClients([], previous, observed, clients, "uninstall"),
    purgeConfig,
  }
}
