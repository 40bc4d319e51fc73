// The sandbox probes from src/sandbox (one fixed command per networkless profile in a disposable
// workspace) as doctor checks. Same argument builder as the plugin, so a pass here means the
// plugin's sandbox works on this host.
import type { Config } from "../config/schema"
import { hostContext, probeSandboxProfiles, type HostFlags } from "../sandbox"
import type { CheckResult } from "./check"

const FIX =
  "Run the failing profile's bwrap command by hand to see the kernel's refusal; user namespaces must be allowed " +
  "(sysctl kernel.unprivileged_userns_clone=1, or AppArmor's userns restriction lifted) and /proc mountable."

export async function sandboxChecks(input: {
  flags: HostFlags
  config?: Config
  bwrap: string
  tmpRoot: string
}): Promise<CheckResult[]> {
  const host = hostContext(input.flags, input.config?.sandboxRuntime.trustedRoots ?? [])
  const reports = await probeSandboxProfiles({ host, tmpRoot: input.tmpRoot, bwrap: input.bwrap })
  return reports.map((report) => ({
    id: `sandbox:${report.profile}`,
    status: report.ok ? "pass" : "fail",
    detail: report.ok ? `probe ok (${report.durationMs} ms)` : report.detail,
    fix: report.ok ? undefined : FIX,
  }))
}
