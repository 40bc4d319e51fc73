// The runner on the real bwrap: output caps, the log file, timeouts and bwrap setup failures, and the
// doctor probes for each networkless profile.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { existsSync, readFileSync, statSync } from "node:fs"
import { rm } from "node:fs/promises"
import { AppError } from "../../src/errors"
import { hostFs } from "../../src/sandbox/fs-view"
import { planSandbox } from "../../src/sandbox/plan"
import { probeSandboxProfiles } from "../../src/sandbox/probes"
import { ALL_PROFILES, profileName, profilePolicy } from "../../src/sandbox/profiles"
import { runSandboxed } from "../../src/sandbox/run"
import { makeFixture, type Fixture } from "./_harness"

let fx: Fixture
beforeAll(async () => {
  fx = await makeFixture()
})
afterAll(() => fx.cleanup())

const sh = (script: string, options: Partial<Parameters<typeof runSandboxed>[2]> = {}) =>
  runSandboxed(
    planSandbox({ profile: { kind: "worker" }, workspace: fx.workspace, host: fx.host }, hostFs),
    ["/bin/bash", "-c", script],
    {
      timeoutMs: 10_000,
      maxOutputBytes: 4096,
      ...options,
    },
  )

describe("runSandboxed", () => {
  test("returns the exit code, stdout and stderr of the command", async () => {
    const result = await sh("echo out; echo err >&2; exit 3")
    expect(result).toMatchObject({ exitCode: 3, stdout: "out\n", stderr: "err\n", timedOut: false, truncated: false })
    expect(result.failure).toBeUndefined()
  })

  test("caps what it returns and says so", async () => {
    const result = await sh("head -c 1000000 /dev/zero | tr '\\0' a")
    expect(result.stdout.length).toBe(4096)
    expect(result.truncated).toBe(true)
  })

  test("keeps the log's head and tail up to its limit, and says how many bytes were cut between them", async () => {
    const logFile = `${fx.root}/run.log`
    const result = await sh("for i in $(seq 1 20000); do echo line-$i; done; echo done >&2", {
      logFile,
      logLimitBytes: 50_000,
    })
    expect(result.log).toMatchObject({ path: logFile, bytesWritten: 50_000 })
    const seen = result.log!.bytesSeen
    expect(seen).toBeGreaterThan(150_000)
    const text = readFileSync(logFile, "utf8")
    expect(text.startsWith("line-1\nline-2\n")).toBe(true)
    // The end survives: the last line printed (stderr's, after the loop) closes the log.
    expect(text.endsWith("line-20000\ndone\n")).toBe(true)
    expect(text).toContain(`[log cut: ${seen - 50_000} bytes cut here; the first 25000 and the last 25000 kept]`)
    expect(statSync(logFile).size).toBeLessThan(50_100)
  })

  test("control: without a limit the log is every byte printed", async () => {
    const logFile = `${fx.root}/unbounded.log`
    const result = await sh("for i in $(seq 1 20000); do echo line-$i; done", { logFile })
    expect(result.log!.bytesWritten).toBe(result.log!.bytesSeen)
    expect(statSync(logFile).size).toBe(result.log!.bytesSeen)
    expect(readFileSync(logFile, "utf8")).not.toContain("[log cut")
  })

  test("control: output within the limit is kept whole, with no cut line", async () => {
    const logFile = `${fx.root}/whole.log`
    const result = await sh("seq 1 1000", { logFile, logLimitBytes: 50_000 })
    const text = readFileSync(logFile, "utf8")
    expect(text).toBe(`${Array.from({ length: 1000 }, (_, i) => i + 1).join("\n")}\n`)
    expect(result.log).toMatchObject({ bytesWritten: text.length, bytesSeen: text.length })
  })

  test("a command past its timeout is killed and reported as timed out", async () => {
    // The command's own end is an hour away: the answer can only come from the timeout's kill.
    const result = await sh("sleep 3600", { timeoutMs: 1000 })
    expect(result.timedOut).toBe(true)
    expect(result.exitCode).not.toBe(0)
  }, 60_000)

  test("an abort signal stops the sandbox", async () => {
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    const result = await sh("sleep 30", { signal: controller.signal })
    expect(result.aborted).toBe(true)
  })

  test("a missing bwrap is a Prerequisite error naming the fix", async () => {
    const error = await sh("true", { bwrap: "/nonexistent/bwrap" }).catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(AppError)
    expect((error as AppError).kind).toBe("Prerequisite")
    // What a user of a release can do: a release carries no scripts/.
    expect((error as AppError).hint).toContain("github.com/containers/bubblewrap/releases")
    expect((error as AppError).hint).not.toContain("scripts/")
  })

  test("a bwrap setup failure is classified, not passed off as the command's exit", async () => {
    const missing = await runSandboxed(
      planSandbox({ profile: { kind: "scout" }, workspace: fx.workspace, host: fx.host }, hostFs),
      ["/no/such/command"],
      { timeoutMs: 5000, maxOutputBytes: 4096 },
    )
    expect(missing.failure?.code).toBe("exec-failed")
  })
})

describe("checked mounts are pinned", () => {
  test("a .git swapped for another directory between the plan and bwrap's mount: nothing runs", async () => {
    const { renameSync, mkdirSync, writeFileSync } = await import("node:fs")
    const plan = planSandbox({ profile: { kind: "scout" }, workspace: fx.workspace, host: fx.host }, hostFs)
    expect(plan.pins.map((pin) => pin.path)).toEqual([fx.workspace, `${fx.workspace}/.git`])
    // Control: unswapped, the command runs and sees the real .git.
    expect(
      (await runSandboxed(plan, ["/bin/ls", ".git"], { timeoutMs: 10_000, maxOutputBytes: 4096 })).stdout,
    ).toContain("HEAD")
    // The swap a racing process makes in the window: the planned .git moves away, another takes its name.
    renameSync(`${fx.workspace}/.git`, `${fx.workspace}/.git-real`)
    mkdirSync(`${fx.workspace}/.git`)
    writeFileSync(`${fx.workspace}/.git/planted`, "x\n")
    try {
      const result = await runSandboxed(plan, ["/bin/ls", ".git"], { timeoutMs: 10_000, maxOutputBytes: 4096 })
      expect(result.stdout).not.toContain("planted")
      expect(result.failure).toMatchObject({ code: "mount-failed" })
      expect(result.failure?.detail).toContain(`${fx.workspace}/.git changed between the sandbox's check and its mount`)
      expect(result.failure?.hint).toContain("Nothing ran")
    } finally {
      const { rmSync } = await import("node:fs")
      rmSync(`${fx.workspace}/.git`, { recursive: true, force: true })
      renameSync(`${fx.workspace}/.git-real`, `${fx.workspace}/.git`)
    }
  })

  test("a nested workspace swapped for a symlink to ~/.ssh while the sandbox starts: nothing runs", async () => {
    const { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } = await import("node:fs")
    const sub = `${fx.workspace}/sub`
    mkdirSync(sub)
    writeFileSync(`${sub}/mine.txt`, "mine\n")
    const plan = planSandbox({ profile: { kind: "scout" }, workspace: sub, host: fx.host }, hostFs)
    // What a writer in the enclosing workspace can do between the plan and bwrap's mount.
    renameSync(sub, `${fx.workspace}/sub-real`)
    symlinkSync(`${fx.home}/.ssh`, sub)
    try {
      const cat = ["/bin/cat", "id_ed25519"]
      // Control: without the pins, bwrap mounts the link's target and the key is read.
      const unpinned = await runSandboxed({ ...plan, pins: [] }, cat, { timeoutMs: 10_000, maxOutputBytes: 4096 })
      expect(unpinned.stdout).toContain("FAKE-SSH-KEY")
      const pinned = await runSandboxed(plan, cat, { timeoutMs: 10_000, maxOutputBytes: 4096 })
      expect(pinned.stdout).not.toContain("FAKE-SSH-KEY")
      expect(pinned.failure?.detail).toContain(`${sub} changed between the sandbox's check and its mount`)
    } finally {
      rmSync(sub)
      renameSync(`${fx.workspace}/sub-real`, sub)
      rmSync(sub, { recursive: true })
    }
  })
})

describe("what each profile allows", () => {
  for (const profile of ALL_PROFILES)
    test(`${profileName(profile)}: private /tmp and HOME writable, workspace ${profilePolicy(profile).workspace}, git usable`, async () => {
      const plan = planSandbox({ profile, workspace: fx.workspace, host: fx.host }, hostFs)
      const name = `edit-${profileName(profile)}`
      const script = `echo t > /tmp/t && echo h > "$HOME/h" && git status --short >/dev/null && echo ok > ${name}`
      const result = await runSandboxed(plan, ["/bin/bash", "-c", script], { timeoutMs: 10_000, maxOutputBytes: 4096 })
      const writable = profilePolicy(profile).workspace === "writable"
      expect(result.exitCode === 0).toBe(writable)
      expect(existsSync(`${fx.workspace}/${name}`)).toBe(writable)
      if (!writable) expect(result.stderr).toContain("Read-only file system")
    })
})

describe("probeSandboxProfiles", () => {
  test("every profile passes its fixed probe", async () => {
    const reports = await probeSandboxProfiles({ host: fx.host, tmpRoot: fx.root })
    expect(reports.map((report) => [report.profile, report.ok, report.detail])).toEqual([
      ["scout", true, "ok"],
      ["worker", true, "ok"],
      ["runner", true, "ok"],
      ["runner-writable", true, "ok"],
      ["runner-network", true, "ok"],
      ["runner-writable-network", true, "ok"],
    ])
  })

  test("a probe fails (and says why) when the sandbox cannot start", async () => {
    const reports = await probeSandboxProfiles({ host: fx.host, tmpRoot: fx.root, bwrap: "/nonexistent/bwrap" })
    expect(reports.every((report) => !report.ok && report.detail.length > 0)).toBe(true)
  })
})

describe("resource caps", () => {
  test("/tmp, file size and process count are capped; a control under the caps succeeds", async () => {
    const host = {
      ...fx.host,
      caps: { tmpMaxBytes: 16 * 1024 * 1024, fileMaxBytes: 4 * 1024 * 1024, maxProcesses: 64 },
    }
    const plan = planSandbox({ profile: { kind: "worker" }, workspace: fx.workspace, host }, hostFs)
    const sh = (script: string) =>
      runSandboxed(plan, ["/bin/bash", "-c", script], { timeoutMs: 30_000, maxOutputBytes: 4096 })
    // Control: small writes go through.
    expect(
      (await sh("head -c 1000000 /dev/zero > /tmp/small && head -c 1000000 /dev/zero > small.bin && echo ok")).stdout,
    ).toContain("ok")
    // 2 GB into RAM-backed /tmp stops at the tmpfs size (ENOSPC) or the file cap, never fills memory.
    const tmp = await sh("head -c 2000000000 /dev/zero > /tmp/big; echo exit=$?; du -b /tmp/big | cut -f1")
    expect(tmp.stdout).toMatch(/exit=[1-9]/)
    expect(Number(tmp.stdout.trim().split("\n").at(-1))).toBeLessThanOrEqual(16 * 1024 * 1024)
    const file = await sh("head -c 50000000 /dev/zero > big.bin; echo exit=$?; stat -c %s big.bin")
    expect(file.stdout).toMatch(/exit=[1-9]/)
    expect(Number(file.stdout.trim().split("\n").at(-1))).toBeLessThanOrEqual(4 * 1024 * 1024)
    expect((await sh("ulimit -u; ulimit -H -f")).stdout.trim().split("\n")).toEqual(["64", String(4 * 1024)])
    await rm(`${fx.workspace}/small.bin`, { force: true })
    await rm(`${fx.workspace}/big.bin`, { force: true })
  })
})
