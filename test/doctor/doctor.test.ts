// Doctor on an isolated installation: healthy as installed, and each broken piece turns it
// unhealthy with the fix named.
import { afterAll, describe, expect, test } from "bun:test"
import { readFileSync, rmSync } from "node:fs"
import { liveCheck } from "../../src/doctor/live"
import { LAUNCHERS } from "../../src/sandbox"
import { sandboxChecks } from "../../src/doctor/probes"
import { formatJson, formatReport } from "../../src/doctor/report"
import { exitCodeOf, runDoctor, type DoctorReport } from "../../src/doctor/run"
import { BIN, doctorDepsFor, installYes, machine, sharedInstallation, type Machine } from "../install/helpers"
import { readFlags } from "../../src/config/flags"
import { savePatchRecord } from "../../src/workspace/patches/patches"
import { layoutOf } from "../../src/workspace/git/private-git"

const installed = async (m: Machine, integrations = "codex") => {
  const result = await installYes(m, { models: "scout=local/m,worker=local/n", variants: "scout=low", integrations })
  expect(result.code).toBe(0)
}
const failures = (report: DoctorReport) => report.checks.filter((c) => c.status === "fail")
/** The Codex installation most tests break a piece of; each gets it as installed. */
const shared = sharedInstallation(installed)
afterAll(() => shared.dispose())

describe("doctor", () => {
  test("a fresh isolated install is healthy; without probes it is READINESS_UNVERIFIED, never HEALTHY", async () => {
    using m = machine()
    await installed(m, "codex,claude")
    const probed = await runDoctor(doctorDepsFor(m), { sandboxProbes: true, live: false })
    expect(failures(probed)).toEqual([])
    expect(probed.verdict).toBe("DOCTOR_HEALTHY")
    expect(formatReport(probed).split("\n").at(-1)).toBe("DOCTOR_HEALTHY")
    const skipped = await runDoctor(doctorDepsFor(m), { sandboxProbes: false, live: false })
    expect(failures(skipped)).toEqual([])
    expect(skipped.verdict).toBe("DOCTOR_READINESS_UNVERIFIED")
    expect(exitCodeOf(skipped)).toBe(0)
    expect(JSON.parse(formatJson(skipped))).toMatchObject({ verdict: "DOCTOR_READINESS_UNVERIFIED", healthy: false })
  }, 120_000)

  test("the real sandbox probes pass on this host (bwrap >= 0.12 at /usr/bin/bwrap)", async () => {
    using m = machine()
    const checks = await sandboxChecks({ flags: readFlags(m.env), bwrap: LAUNCHERS.bwrap, tmpRoot: m.dir })
    expect(checks.map((c) => [c.id, c.status])).toEqual([
      ["sandbox:scout", "pass"],
      ["sandbox:worker", "pass"],
      ["sandbox:runner", "pass"],
      ["sandbox:runner-writable", "pass"],
      ["sandbox:runner-network", "pass"],
      ["sandbox:runner-writable-network", "pass"],
    ])
  }, 120_000)

  const broken: Array<{
    name: string
    breakIt: (m: Machine) => Partial<Parameters<typeof doctorDepsFor>[1]> | undefined
    id: string
    detail: RegExp
    fix: RegExp
  }> = [
    {
      name: "missing bwrap",
      breakIt: (m) => ({ launchers: { ...LAUNCHERS, bwrap: `${m.dir}/no-such-bwrap` } }),
      id: "bwrap",
      detail: /no-such-bwrap is missing/,
      fix: /bubblewrap >= 0\.12\.0 as \/usr\/bin\/bwrap/,
    },
    {
      name: "old bwrap",
      breakIt: (m) => ({
        launchers: {
          ...LAUNCHERS,
          bwrap: m.write(`${m.dir}/old-bwrap`, "#!/bin/sh\necho 'bubblewrap 0.8.0'\n", 0o755),
        },
      }),
      id: "bwrap",
      detail: /bubblewrap 0\.8\.0 is older than 0\.12\.0/,
      fix: /github\.com\/containers\/bubblewrap\/releases/,
    },
    {
      name: "missing launcher",
      breakIt: (m) => ({ launchers: { ...LAUNCHERS, python3: `${m.dir}/python3` } }),
      id: "launcher:python3",
      detail: /python3 is missing/,
      fix: /exactly/,
    },
    {
      name: "agent file with the wrong step limit",
      breakIt: (m) => {
        const file = `${m.paths.opencodeAgentsDir}/opencode-orchestrator-worker.md`
        m.write(file, readFileSync(file, "utf8").replace("steps: 32", "steps: 12"))
      },
      id: "agent:opencode-orchestrator-worker",
      detail: /has steps 12, but the config gives worker 32/,
      fix: /install --yes/,
    },
    {
      name: "Codex timeout mismatch",
      breakIt: (m) => {
        const file = `${m.env.CODEX_HOME}/config.toml`
        m.write(file, readFileSync(file, "utf8").replace("tool_timeout_sec = 1500", "tool_timeout_sec = 600"))
      },
      id: "codex:mcp",
      detail: /tool_timeout_sec is 600, but the config's parent deadline is 1500s/,
      fix: /tool_timeout_sec = 1500/,
    },
    {
      name: "ripgrep not on PATH",
      breakIt: (m) => ({ env: { ...m.env, PATH: `${BIN}:${m.dir}/only-opencode` } }),
      id: "ripgrep",
      detail: /rg \(ripgrep\) is not on PATH/,
      fix: /apt-get install ripgrep/,
    },
    {
      name: "plugin missing",
      breakIt: (m) => void rmSync(m.paths.opencodePluginFile),
      id: "plugin",
      detail: /is missing/,
      fix: /install --yes/,
    },
    {
      name: "configured variant no longer offered",
      breakIt: (m) => {
        const config = JSON.parse(readFileSync(m.paths.configFile, "utf8"))
        m.write(m.paths.configFile, JSON.stringify({ ...config, modelVariants: { scout: "turbo" } }))
      },
      id: "model:scout",
      detail: /gives scout the variant "turbo", which local\/m does not have/,
      fix: /^Set modelVariants\.scout in .* then run `opencode-mcp-orchestrator install --yes`/,
    },
    {
      name: "a typo'd model in config.json",
      breakIt: (m) => {
        const config = JSON.parse(readFileSync(m.paths.configFile, "utf8"))
        m.write(m.paths.configFile, JSON.stringify({ ...config, models: { ...config.models, scout: "local/mm" } }))
      },
      id: "model:scout",
      detail: /routes scout to "local\/mm", which OpenCode does not list \(near: local\/m, local\/n\)/,
      fix: /^Set models\.scout in .* then run `opencode-mcp-orchestrator install --yes`/,
    },
  ]
  for (const c of broken)
    test(
      `${c.name} → unhealthy, fix named`,
      () =>
        shared.use(async (m) => {
          const over = c.breakIt(m) ?? {}
          const report = await runDoctor(doctorDepsFor(m, over), { sandboxProbes: true, live: false })
          expect(report.verdict).toBe("DOCTOR_UNHEALTHY")
          expect(exitCodeOf(report)).toBe(1)
          const failed = failures(report).find((f) => f.id === c.id)
          // Every failure is named when the expected one is missing.
          expect(failed?.detail, JSON.stringify(failures(report))).toMatch(c.detail)
          expect(failed?.fix).toMatch(c.fix)
          expect(formatReport(report)).toMatch(/\nDOCTOR_UNHEALTHY$/)
        }),
      120_000,
    )

  test(
    "an agent file install wrote, behind a config.json edit, asks for `install --yes`, not for the user's edits",
    () =>
      shared.use(async (m) => {
        const config = JSON.parse(readFileSync(m.paths.configFile, "utf8"))
        m.write(m.paths.configFile, JSON.stringify({ ...config, models: { ...config.models, scout: "local/mm" } }))
        const agent = (await runDoctor(doctorDepsFor(m), { sandboxProbes: false, live: false })).checks.find(
          (c) => c.id === "agent:opencode-orchestrator-scout",
        )
        expect(agent).toMatchObject({
          status: "fail",
          detail: expect.stringContaining("rendered from an earlier config.json"),
        })
        expect(agent?.fix).toBe(
          "Run `opencode-mcp-orchestrator install --yes` to render the agents from config.json again.",
        )
        // Control: the same file edited by hand is the user's, and doctor says so.
        const file = `${m.paths.opencodeAgentsDir}/opencode-orchestrator-scout.md`
        m.write(file, `${readFileSync(file, "utf8")}\nmy own note\n`)
        const edited = (await runDoctor(doctorDepsFor(m), { sandboxProbes: false, live: false })).checks.find(
          (c) => c.id === "agent:opencode-orchestrator-scout",
        )
        expect(edited).toMatchObject({ status: "fail", detail: `${file} was edited after install.` })
        expect(edited?.fix).toContain("Move your edits elsewhere")
      }),
    120_000,
  )

  test(
    "a bwrap that cannot be used is one line: the sandbox probes are not run under it",
    () =>
      shared.use(async (m) => {
        const bwrap = m.write(`${m.dir}/bwrap`, "not a program\n", 0o644)
        let probed = false
        const probes = async () => {
          probed = true
          return []
        }
        const report = await runDoctor(doctorDepsFor(m, { launchers: { ...LAUNCHERS, bwrap }, probes }), {
          sandboxProbes: true,
          live: false,
        })
        expect(failures(report).map((f) => [f.id, f.detail])).toEqual([["bwrap", `${bwrap} is not executable`]])
        expect(report.checks.find((c) => c.id === "sandbox")).toMatchObject({ status: "skip" })
        expect(probed).toBe(false)
        // Control: with the real bwrap the probes run.
        await runDoctor(doctorDepsFor(m, { probes }), { sandboxProbes: true, live: false })
        expect(probed).toBe(true)
      }),
    120_000,
  )

  test(
    "--live: a delegation that cannot run makes doctor unhealthy, with the missing piece named",
    () =>
      shared.use(async (m) => {
        // The real live check (src/doctor/live.ts) with no opencode on PATH; the compiled-binary install
        // test runs it for real to DOCTOR_HEALTHY.
        const live = () => liveCheck({ ...m.env, PATH: `${m.dir}/no-bin` })
        const report = await runDoctor(doctorDepsFor(m, { live }), { sandboxProbes: false, live: true })
        expect(report.verdict).toBe("DOCTOR_UNHEALTHY")
        const failed = failures(report)
        expect(failed.map((f) => f.id)).toEqual(["live"])
        expect(failed[0]?.detail).toContain('"opencode" was not found on PATH')
      }),
    120_000,
  )

  test(
    "worker patches waiting are listed with their size; an open one is counted, an applied one named as applied; none is a plain pass (control)",
    () =>
      shared.use(async (m) => {
        const none = await runDoctor(doctorDepsFor(m), { sandboxProbes: false, live: false })
        expect(none.checks.find((c) => c.id === "patches")).toMatchObject({
          status: "pass",
          detail: "no worker patches waiting",
        })
        const layout = layoutOf(`${m.dir}/worktrees`, "patch_a1_00ff")
        const base = {
          version: 1 as const,
          layout,
          source: { workspace: `${m.dir}/repo`, root: `${m.dir}/repo`, gitDir: `${m.dir}/repo/.git` },
          base: "0".repeat(40),
        }
        const file = { path: "src/a.ts", change: "modified" as const, additions: 3, deletions: 1, binary: false }
        await savePatchRecord(m.paths.patchesDir, {
          ...base,
          id: "patch_a1_00ff",
          status: "ready",
          createdAt: "2026-11-30T10:00:00Z",
          files: [file, { ...file, path: "b.ts" }],
          bytes: 1234,
          disk: { bytes: 5 * 1024 * 1024, entries: 9, partial: false },
        })
        await savePatchRecord(m.paths.patchesDir, {
          ...base,
          id: "patch_a2_00ee",
          status: "open",
          createdAt: "2026-11-30T11:00:00Z",
        })
        // Applied: no longer waiting, named as kept until patch_discard.
        const applied = {
          ...base,
          id: "patch_a3_00dd",
          status: "ready" as const,
          createdAt: "2026-11-30T12:00:00Z",
          files: [file],
          bytes: 99,
          digest: "d".repeat(64),
        }
        await savePatchRecord(m.paths.patchesDir, {
          ...applied,
          appliedDigest: applied.digest,
          appliedAt: "2026-11-30T12:30:00.000Z",
        })
        const report = await runDoctor(doctorDepsFor(m), { sandboxProbes: false, live: false })
        const check = report.checks.find((c) => c.id === "patches")!
        expect(check.status).toBe("pass")
        // The diff's size and what the worktree takes on disk, told apart.
        expect(check.detail).toBe(
          `1 open (their workers run); 1 waiting, 1234 bytes of diff, 5.0 MB of worktrees on disk: patch_a1_00ff for ${m.dir}/repo (2 files, 1234 bytes of diff, its worktree 5.0 MB on disk); patch_apply or patch_discard each; 1 applied, kept until patch_discard: patch_a3_00dd`,
        )
        expect(report.checks.find((c) => c.id === "lanes")).toMatchObject({ status: "pass" })
        expect(report.verdict).toBe("DOCTOR_READINESS_UNVERIFIED")
      }),
    120_000,
  )

  test(
    "without --live no delegation is sent",
    () =>
      shared.use(async (m) => {
        let called = false
        const report = await runDoctor(
          doctorDepsFor(m, {
            live: async () => {
              called = true
              return []
            },
          }),
          { sandboxProbes: false, live: false },
        )
        expect(called).toBe(false)
        expect(report.checks.some((c) => c.id === "live")).toBe(false)
      }),
    120_000,
  )
})
