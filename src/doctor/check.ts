// What a doctor check is: a function of the installation's context to results, each pass, fail or
// skip with, on failure, what to do; and the helpers every check builds its results with.
import type { Paths } from "../config/paths"
import type { Config } from "../config/schema"
import type { ClientHomes } from "../install/homes"
import type { InstallManifest } from "../install/manifest"
import type { Launchers } from "../sandbox"
import type { Run } from "../util/process"

export type CheckStatus = "pass" | "fail" | "skip"

export interface CheckResult {
  id: string
  status: CheckStatus
  detail: string
  fix?: string
}

export interface DoctorContext {
  paths: Paths
  homes: ClientHomes
  launchers: Launchers
  run: Run
  opencode: string
  env: Record<string, string | undefined>
  config?: Config
  manifest?: InstallManifest
}

export type Check = (ctx: DoctorContext) => Promise<CheckResult[]>

export const REINSTALL = "Run `opencode-mcp-orchestrator install --yes` to write it again from your config."
export const pass = (id: string, detail: string): CheckResult => ({ id, status: "pass", detail })
export const failed = (id: string, detail: string, fix: string): CheckResult => ({ id, status: "fail", detail, fix })
