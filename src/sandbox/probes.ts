// Doctor's sandbox checks, as data: the bwrap binary's version and safety, and one fixed command per
// networkless profile in a disposable workspace, confirming on the host what the sandbox let through.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs"
import { BWRAP } from "./argv"
import { isSafeVersion, MIN_SAFE_VERSION, parseBwrapVersion } from "./bwrap"
import { hostFs, type FsView } from "./fs-view"
import { planSandbox, type HostContext } from "./plan"
import type { SandboxProfile } from "./profiles"
import { readBwrapVersion, runSandboxed } from "./run"

export interface BwrapReport {
  path: string
  /** e.g. "0.12.0"; undefined when bwrap is missing or did not answer. */
  version?: string
  safe: boolean
  detail: string
}

export async function probeBwrap(bwrap = BWRAP): Promise<BwrapReport> {
  const output = await readBwrapVersion(bwrap)
  const parsed = output === undefined ? undefined : parseBwrapVersion(output)
  if (!parsed)
    return { path: bwrap, safe: false, detail: `${bwrap} did not report a version (\`${bwrap} --version\` failed).` }
  const version = parsed.join(".")
  const safe = isSafeVersion(parsed)
  const detail = safe
    ? `bubblewrap ${version}`
    : `bubblewrap ${version} is older than ${MIN_SAFE_VERSION} and affected by GHSA-pxhw-h44j-8pfx.`
  return { path: bwrap, version, safe, detail }
}

export interface ProbeReport {
  profile: string
  ok: boolean
  detail: string
  durationMs: number
}

interface ProbeSpec {
  name: string
  profile: SandboxProfile
  script: string
  /** What must hold on the host afterwards (given the workspace), or a reason it does not. */
  verify(workspace: string): string | undefined
}

const readOnly = (ws: string) => (existsSync(`${ws}/probe.txt`) ? "the read-only workspace was written" : undefined)

const writableButGit = (ws: string) =>
  readFileSync(`${ws}/probe.txt`, "utf8").trim() !== "written"
    ? "the workspace write did not reach the host"
    : existsSync(`${ws}/.git/probe`)
      ? ".git was writable"
      : undefined

/** The workspace takes a write but .git refuses one. */
const WRITE_BUT_NOT_GIT = "echo written > probe.txt && ! (echo x > .git/probe) 2>/dev/null && echo PROBE_OK"
/** The host-network profiles mount the resolver files (and fail closed without them). */
const WITH_RESOLVER = "test -r /etc/resolv.conf && "

const PROBES: ProbeSpec[] = [
  {
    name: "scout",
    profile: { kind: "scout" },
    script: "cat seed.txt && ! (echo x > probe.txt) 2>/dev/null && echo PROBE_OK",
    verify: readOnly,
  },
  {
    name: "worker",
    profile: { kind: "worker" },
    script: WRITE_BUT_NOT_GIT,
    verify: writableButGit,
  },
  {
    name: "runner",
    profile: { kind: "runner", workspace: "read_only", network: "disabled" },
    script: "! (echo x > probe.txt) 2>/dev/null && echo tmp > /tmp/probe && cat /tmp/probe >/dev/null && echo PROBE_OK",
    verify: readOnly,
  },
  {
    name: "runner-writable",
    profile: { kind: "runner", workspace: "writable", network: "disabled" },
    script: WRITE_BUT_NOT_GIT,
    verify: writableButGit,
  },
  // The host-network profiles are built (resolver and CA files mounted, failing closed without them)
  // but send nothing: doctor's probes stay networkless.
  {
    name: "runner-network",
    profile: { kind: "runner", workspace: "read_only", network: "host" },
    script: `${WITH_RESOLVER}! (echo x > probe.txt) 2>/dev/null && echo PROBE_OK`,
    verify: readOnly,
  },
  {
    name: "runner-writable-network",
    profile: { kind: "runner", workspace: "writable", network: "host" },
    script: `${WITH_RESOLVER}${WRITE_BUT_NOT_GIT}`,
    verify: writableButGit,
  },
]

async function probeOne(
  spec: ProbeSpec,
  host: HostContext,
  tmpRoot: string,
  bwrap: string,
  fs: FsView,
): Promise<ProbeReport> {
  const started = performance.now()
  const workspace = mkdtempSync(`${tmpRoot}/opencode-orchestrator-probe-`)
  const report = (ok: boolean, detail: string) => ({
    profile: spec.name,
    ok,
    detail,
    durationMs: Math.round(performance.now() - started),
  })
  try {
    writeFileSync(`${workspace}/seed.txt`, "seed\n")
    mkdirSync(`${workspace}/.git`)
    writeFileSync(`${workspace}/.git/HEAD`, "ref: refs/heads/main\n")
    const plan = planSandbox({ profile: spec.profile, workspace, host }, fs)
    const result = await runSandboxed(plan, ["/bin/sh", "-c", spec.script], {
      timeoutMs: 15_000,
      maxOutputBytes: 4096,
      bwrap,
    })
    if (result.failure) return report(false, `${result.failure.detail}: ${result.failure.hint}`)
    if (result.exitCode !== 0 || !result.stdout.includes("PROBE_OK"))
      return report(
        false,
        `exit ${result.exitCode}${result.timedOut ? " (timed out)" : ""}: ${result.stderr.trim().slice(0, 300)}`,
      )
    const wrong = spec.verify(workspace)
    return wrong ? report(false, wrong) : report(true, "ok")
  } catch (error) {
    return report(false, error instanceof Error ? error.message : String(error))
  } finally {
    rmSync(workspace, { recursive: true, force: true })
  }
}

/** One report per profile (none sends traffic); doctor is healthy only when all are ok. */
export async function probeSandboxProfiles(options: {
  host: HostContext
  tmpRoot: string
  bwrap?: string
  fs?: FsView
}): Promise<ProbeReport[]> {
  const reports: ProbeReport[] = []
  for (const spec of PROBES)
    reports.push(await probeOne(spec, options.host, options.tmpRoot, options.bwrap ?? BWRAP, options.fs ?? hostFs))
  return reports
}
