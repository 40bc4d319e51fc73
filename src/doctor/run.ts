// Runs every check and decides the verdict: DOCTOR_HEALTHY only when nothing failed and the sandbox
// probes ran; DOCTOR_READINESS_UNVERIFIED when they were skipped and nothing else failed;
// DOCTOR_UNHEALTHY (exit 1) when anything failed.
import { loadConfig } from "../config/load"
import { describe } from "../errors"
import { readManifest } from "../install/manifest"
import type { CheckResult, DoctorContext } from "./check"
import { CHECKS } from "./checks"

export type DoctorVerdict = "DOCTOR_HEALTHY" | "DOCTOR_READINESS_UNVERIFIED" | "DOCTOR_UNHEALTHY"

export interface DoctorReport {
  verdict: DoctorVerdict
  healthy: boolean
  checks: CheckResult[]
}

export interface DoctorOptions {
  /** --no-sandbox-probes: skip the probes; the verdict is then at best READINESS_UNVERIFIED. */
  sandboxProbes: boolean
  /** --live: one delegation through OpenCode with the scripted model. */
  live: boolean
}

export interface DoctorDeps extends Omit<DoctorContext, "config" | "manifest"> {
  /** The sandbox probes (src/sandbox), one result per profile. */
  probes: (config: DoctorContext["config"]) => Promise<CheckResult[]>
  /** `doctor --live` (src/doctor/live.ts). */
  live?: (ctx: DoctorContext) => Promise<CheckResult[]>
}

/** Told as doctor goes, so a person sees each line when it is known and what a slow step waits for. */
export interface DoctorProgress {
  started(waitingFor: string): void
  finished(results: CheckResult[]): void
}

async function guarded(id: string, work: () => Promise<CheckResult[]>): Promise<CheckResult[]> {
  try {
    return await work()
  } catch (error) {
    return [{ id, status: "fail", detail: describe(error), fix: "Fix the problem above and run doctor again." }]
  }
}

export async function runDoctor(
  deps: DoctorDeps,
  options: DoctorOptions,
  progress?: DoctorProgress,
): Promise<DoctorReport> {
  const ctx: DoctorContext = { ...deps }
  const all: CheckResult[] = []
  const report = (...results: CheckResult[]) => {
    all.push(...results)
    if (results.length) progress?.finished(results)
  }
  const step = async (id: string, waitingFor: string, work: () => Promise<CheckResult[]>) => {
    progress?.started(waitingFor)
    report(...(await guarded(id, work)))
  }
  try {
    ctx.config = await loadConfig(deps.paths.configFile)
    const exists = await Bun.file(deps.paths.configFile).exists()
    report({
      id: "config",
      status: exists ? "pass" : "fail",
      detail: exists ? deps.paths.configFile : `${deps.paths.configFile} is missing.`,
      fix: exists ? undefined : "Run `opencode-mcp-orchestrator install`.",
    })
  } catch (error) {
    report({
      id: "config",
      status: "fail",
      detail: describe(error),
      fix: `Fix ${deps.paths.configFile} or rerun \`opencode-mcp-orchestrator install\`.`,
    })
  }
  try {
    ctx.manifest = await readManifest(deps.paths.installManifest)
  } catch (error) {
    report({
      id: "manifest",
      status: "fail",
      detail: describe(error),
      fix: "Rerun `opencode-mcp-orchestrator install`.",
    })
  }
  for (const { check, needsConfig, waitingFor } of CHECKS) {
    if (needsConfig && !ctx.config) continue
    await step(check.name || "check", waitingFor, () => check(ctx))
  }
  // A bwrap that is missing, unexecutable or unsafe is one line above; six probe failures and a
  // user-namespace hint would only hide it.
  const bwrapFailed = all.some((c) => c.id === "bwrap" && c.status === "fail")
  if (!options.sandboxProbes)
    report({
      id: "sandbox",
      status: "skip",
      detail: "sandbox probes skipped (--no-sandbox-probes); readiness is unverified",
    })
  else if (bwrapFailed)
    report({ id: "sandbox", status: "skip", detail: "sandbox probes not run: bwrap is not usable (see bwrap above)" })
  else await step("sandbox", "the sandbox probes (one bwrap run per profile)", () => deps.probes(ctx.config))
  if (options.live) {
    if (deps.live)
      await step("live", "one delegation through OpenCode on the scripted model (the first can take a minute)", () =>
        deps.live!(ctx),
      )
    else
      report({
        id: "live",
        status: "fail",
        detail: "doctor --live is not available in this build yet.",
        fix: "Run `opencode-mcp-orchestrator demo` to exercise the full path, or doctor without --live.",
      })
  }
  const anyFailed = all.some((c) => c.status === "fail")
  const verdict: DoctorVerdict = anyFailed
    ? "DOCTOR_UNHEALTHY"
    : options.sandboxProbes
      ? "DOCTOR_HEALTHY"
      : "DOCTOR_READINESS_UNVERIFIED"
  return { verdict, healthy: verdict === "DOCTOR_HEALTHY", checks: all }
}

export const exitCodeOf = (report: DoctorReport) => (report.verdict === "DOCTOR_UNHEALTHY" ? 1 : 0)
