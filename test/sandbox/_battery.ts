// Runs a table of escape attempts. For each attempt: one control that runs the same script with the
// protection absent and must succeed (so the test can fail), then one test per profile that must deny
// it. Success is decided by host evidence when the attempt names some (a write that reached the host),
// else by the script's exit status (each script exits 0 only if the attack worked).
import { afterAll, describe, expect, test } from "bun:test"
import { rmSync } from "node:fs"
import { profileName, type SandboxProfile } from "../../src/sandbox/profiles"
import { fill, inSandbox, inWeakenedSandbox, makeFixture, onHost, STARTED, type Fixture } from "./_harness"

export interface Attempt {
  name: string
  /** Profiles that must deny it. */
  profiles: readonly SandboxProfile[]
  script: string
  /** Prepares the host side (a symlink in the workspace, say) before both runs. */
  setup?: (fx: Fixture) => void | Promise<void>
  /** True when the attack left its mark on the host. */
  evidence?: (fx: Fixture) => boolean
  /** "host": no sandbox at all (default). "weakened": the sandbox without cap-drop and the userns lock. */
  control?: "host" | "weakened"
  /** Run inside the linked worktree instead of the main workspace. */
  useWorktree?: boolean
  timeoutMs?: number
  /** Wait this long after the run before looking for evidence (background children). */
  settleMs?: number
  /** Host files an attempt's control may create outside the fixture; removed afterwards. */
  cleanup?: string[]
}

/** What a control (or a failed denial) created outside the fixture; absent before every run. */
const removeLeftovers = (attempt: Attempt) => {
  for (const path of attempt.cleanup ?? []) rmSync(path, { force: true, recursive: true })
}

const TEST_TIMEOUT_MS = 30_000

const succeeded = (attempt: Attempt, fx: Fixture, code: number | null) =>
  attempt.evidence ? attempt.evidence(fx) : code === 0

export function runBattery(
  title: string,
  attempts: readonly Attempt[],
  extra: () => Record<string, string> = () => ({}),
) {
  const names = new Set<string>()
  for (const attempt of attempts) {
    if (names.has(attempt.name)) throw new Error(`duplicate attempt ${attempt.name}`)
    names.add(attempt.name)
  }
  describe(title, () => {
    afterAll(() => attempts.forEach(removeLeftovers))
    for (const attempt of attempts) {
      describe(attempt.name, () => {
        test(
          "control: succeeds without the protection",
          async () => {
            const fx = await makeFixture({ worktree: attempt.useWorktree })
            try {
              await attempt.setup?.(fx)
              const script = fill(attempt.script, fx, extra())
              const cwd = attempt.useWorktree ? fx.worktree : fx.workspace
              const profile = attempt.profiles[0]!
              const result =
                attempt.control === "weakened"
                  ? await inWeakenedSandbox(profile, fx, script)
                  : await onHost(fx, script, { cwd, timeoutMs: attempt.timeoutMs })
              if (attempt.settleMs) await Bun.sleep(attempt.settleMs)
              expect({ worked: succeeded(attempt, fx, result.code), stderr: result.stderr }).toMatchObject({
                worked: true,
              })
            } finally {
              fx.cleanup()
              removeLeftovers(attempt)
            }
          },
          TEST_TIMEOUT_MS,
        )
        for (const profile of attempt.profiles) {
          test(
            `denied in ${profileName(profile)}`,
            async () => {
              const fx = await makeFixture({ worktree: attempt.useWorktree })
              removeLeftovers(attempt)
              try {
                await attempt.setup?.(fx)
                const result = await inSandbox(profile, fx, fill(attempt.script, fx, extra()), {
                  workspace: attempt.useWorktree ? fx.worktree : fx.workspace,
                  timeoutMs: attempt.timeoutMs,
                })
                expect(result.failure).toBeUndefined()
                expect(result.stdout).toContain(STARTED)
                if (attempt.settleMs) await Bun.sleep(attempt.settleMs)
                expect({ worked: succeeded(attempt, fx, result.exitCode), stdout: result.stdout }).toMatchObject({
                  worked: false,
                })
              } finally {
                fx.cleanup()
              }
            },
            TEST_TIMEOUT_MS,
          )
        }
      })
    }
  })
}

export const SCOUT: SandboxProfile = { kind: "scout" }
export const WORKER: SandboxProfile = { kind: "worker" }
export const RUN_RO: SandboxProfile = { kind: "runner", workspace: "read_only", network: "disabled" }
export const RUN_RW: SandboxProfile = { kind: "runner", workspace: "writable", network: "disabled" }
export const RUN_RO_NET: SandboxProfile = { kind: "runner", workspace: "read_only", network: "host" }
export const RUN_RW_NET: SandboxProfile = { kind: "runner", workspace: "writable", network: "host" }
export const EVERY = [SCOUT, WORKER, RUN_RO, RUN_RW, RUN_RO_NET, RUN_RW_NET] as const
export const READ_ONLY = [SCOUT, RUN_RO, RUN_RO_NET] as const
export const WRITABLE = [WORKER, RUN_RW, RUN_RW_NET] as const
export const NETLESS = [SCOUT, WORKER, RUN_RO, RUN_RW] as const
