// The sandbox profiles, as data. Each delegated role maps to one profile; the plugin's tools pick one
// and the argument builder turns its policy into mounts. Deciding here (not in the plugin) keeps the
// doctor probes and the tools on the same rules.

export type WorkspaceAccess = "read_only" | "writable"
export type NetworkAccess = "disabled" | "host"

export type SandboxProfile =
  | { kind: "scout" }
  | { kind: "worker" }
  | { kind: "runner"; workspace: WorkspaceAccess; network: NetworkAccess }

export interface ProfilePolicy {
  workspace: WorkspaceAccess
  network: NetworkAccess
  /**
   * Git metadata (`.git`, a `gitdir:` file's target and its common dir) is mounted read-only over a
   * writable workspace. Every writable profile protects it: a sandboxed command that could write
   * `.git/hooks` or `.git/config` would run code on the host the next time anyone uses git there.
   */
  protectGit: boolean
}

export function profilePolicy(profile: SandboxProfile): ProfilePolicy {
  switch (profile.kind) {
    case "scout":
      return { workspace: "read_only", network: "disabled", protectGit: true }
    case "worker":
      return { workspace: "writable", network: "disabled", protectGit: true }
    case "runner":
      return { workspace: profile.workspace, network: profile.network, protectGit: true }
  }
}

/** A short stable name for logs, probe reports and the runner's run directory. */
export function profileName(profile: SandboxProfile): string {
  if (profile.kind !== "runner") return profile.kind
  return `runner-${profile.workspace}-${profile.network}`
}

/** Every profile, for the escape battery and the doctor probes. */
export const ALL_PROFILES: readonly SandboxProfile[] = [
  { kind: "scout" },
  { kind: "worker" },
  { kind: "runner", workspace: "read_only", network: "disabled" },
  { kind: "runner", workspace: "writable", network: "disabled" },
  { kind: "runner", workspace: "read_only", network: "host" },
  { kind: "runner", workspace: "writable", network: "host" },
]
