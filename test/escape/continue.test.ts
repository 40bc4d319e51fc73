// Attacks on task_continue through the real OpenCode on the scripted model: a continue runs only where
// its task still owns the place (a discarded patch's lane may be another repository's worker's now),
// and only after the same policy gate as a new call (admission, mode, tier, the mechanical rule). Each
// refusal comes before any model request, and beside each is a control that runs.
import { describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { mkdir, readdir, rename, rm, symlink, writeFile } from "node:fs/promises"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { hostContext, OPEN_POLICY } from "../../src/sandbox"
import { readJson } from "../../src/util/fs"
import { canonicalWorkspace } from "../../src/workspace/root"
import { battery, makeRepo, scratch, structuredOf, textOf } from "./_world"
import { shell, write } from "../helpers/steps"

const B_SECRET = "B-REPOSITORY-ONLY-5c1e"

const { world, mcp } = battery({
  lane_a: {
    turns: [
      { steps: [write("a.txt", "A1\n"), { text: "Wrote a.txt." }] },
      // What the first task's model would do in a lane that is now another repository's worktree.
      {
        steps: [
          shell("cat b-secret.txt; ls"),
          write("b-secret.txt", "overwritten by A\n"),
          { text: "A again: {{toolOutputs}}" },
        ],
      },
    ],
  },
  lane_b: {
    turns: [
      { steps: [write("b.txt", "B1\n"), { text: "Wrote b.txt." }] },
      { steps: [write("b2.txt", "B2\n"), { text: "Wrote b2.txt." }] },
    ],
  },
  two_turns: {
    turns: [
      { steps: [write("one.txt", "1\n"), { text: "Wrote one.txt." }] },
      { steps: [write("two.txt", "2\n"), { text: "Wrote two.txt." }] },
      { steps: [write("three.txt", "3\n"), { text: "Wrote three.txt." }] },
    ],
  },
  runner_two: { turns: [{ steps: [{ text: "Ran it." }] }, { steps: [{ text: "Ran it again." }] }] },
  drop_marker: {
    turns: [
      { steps: [shell("rm .opencode-mcp-orchestrator/sensitive && echo removed"), { text: "Removed the marker." }] },
      { steps: [write("after.txt", "after\n"), { text: "Wrote after.txt." }] },
      { steps: [write("later.txt", "later\n"), { text: "Wrote later.txt." }] },
    ],
  },
})

const record = (id: unknown) =>
  readJson<TaskRecord>(`${world.home.paths.tasksDir}/${String(id)}.json`) as Promise<TaskRecord>

async function listing(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {}
  for (const name of (await readdir(dir, { recursive: true })).sort()) {
    const file = Bun.file(`${dir}/${name}`)
    out[name] = (await file.exists()) ? await file.text() : "<dir>"
  }
  return out
}

/** A worker's first turn; it must succeed. */
async function worker(cwd: string, task: string, extra: Record<string, unknown> = {}) {
  const out = structuredOf(await mcp.call("worker", { cwd, task, ...extra }))
  expect(out.status).toBe("succeeded")
  return out
}

/** A continue that is refused before any model request, its text returned. */
async function refusedContinue(args: Record<string, unknown>): Promise<string> {
  world.model.reset()
  const result = await mcp.call("task_continue", args)
  expect(result.isError).toBe(true)
  expect(world.model.stepRequests()).toEqual([])
  return textOf(result)
}

describe("a continued task runs only in a worktree that is still its own", () => {
  test("task A's patch discarded and its lane taken by repository B's worker: continue A is refused; B's worktree is untouched and A's model never sees it", async () => {
    const repoA = await makeRepo(world)
    const repoB = await makeRepo(world)
    await writeFile(`${repoB}/b-secret.txt`, `${B_SECRET}\n`)
    const a = await worker(repoA, "Write a.txt. [script:lane_a]", { isolation: "worktree" })
    const taskA = await record(a.task_id)
    expect(
      (await mcp.call("patch_discard", { patch_id: (a.patch as { patch_id: string }).patch_id })).isError,
    ).toBeFalsy()
    const b = await worker(repoB, "Write b.txt. [script:lane_b]", { isolation: "worktree" })
    const taskB = await record(b.task_id)
    // The attack's premise: B's worktree is where A's session ran.
    expect(taskB.workspace).toBe(taskA.workspace)
    const before = await listing(taskB.workspace)
    expect(before["b-secret.txt"]).toBe(`${B_SECRET}\n`)

    const text = await refusedContinue({ task_id: a.task_id, task: "Carry on." })
    expect(text).toContain(`Task ${a.task_id} cannot be continued`)
    expect(text).toContain('next: Start a new worker with isolation "worktree"')
    expect(await listing(taskB.workspace)).toEqual(before)
    expect(world.model.toolResults().some((result) => result.output.includes(B_SECRET))).toBe(false)
    expect((await record(a.task_id)).status).toBe("succeeded")

    // Control: the lane's holder continues there as before, and its patch has both rounds.
    const again = structuredOf(await mcp.call("task_continue", { task_id: b.task_id, task: "Also write b2.txt." }))
    expect(again.status).toBe("succeeded")
    expect((again.patch as { files: Array<{ path: string }> }).files.map((file) => file.path).sort()).toEqual([
      "b.txt",
      "b2.txt",
    ])
  }, 180_000)

  test("a lane claim turned to garbage: the lane is not given to another worker while its patch exists, and the task's continue is refused", async () => {
    const repoA = await makeRepo(world)
    const repoC = await makeRepo(world)
    await writeFile(`${repoC}/b-secret.txt`, `${B_SECRET}\n`)
    const a = await worker(repoA, "Write a.txt. [script:lane_a]", { isolation: "worktree" })
    const taskA = await record(a.task_id)
    const lane = taskA.workspace.split("/").at(-2)!
    await writeFile(`${world.home.paths.patchesDir}/lanes/${lane}.json`, "not a claim")
    const c = await worker(repoC, "Write b.txt. [script:lane_b]", { isolation: "worktree" })
    const taskC = await record(c.task_id)
    // A's patch record still names the lane: the garbage claim does not free it, C runs in another.
    expect(taskC.workspace).not.toBe(taskA.workspace)
    const before = await listing(taskA.workspace)

    // Control: the admission that only asks "is this lane claimed" admits A's continue there.
    const host = hostContext(world.runtime.flags)
    expect(await canonicalWorkspace(taskA.workspace, host, OPEN_POLICY, true)).toBe(taskA.workspace)
    const owned = { ...host, worktrees: { ...host.worktrees!, owner: taskA.isolation!.patchId } }
    await expect(canonicalWorkspace(taskA.workspace, owned, OPEN_POLICY, true)).rejects.toThrow("credential store")

    const text = await refusedContinue({ task_id: a.task_id, task: "Carry on." })
    expect(text).toContain(`its worktree's lane ${lane} is no longer its own (no claim holds it)`)
    expect(await listing(taskA.workspace)).toEqual(before)
    expect(world.model.toolResults().some((result) => result.output.includes(B_SECRET))).toBe(false)
  }, 180_000)
})

describe("a continue racing patch_discard", () => {
  test("8 rounds of task_continue and patch_discard at once: never both done; a refused continue sends nothing, a discarded patch's task never runs", async () => {
    const repo = await makeRepo(world)
    const outcomes: string[] = []
    for (let round = 0; round < 8; round++) {
      const first = await worker(repo, "Write one.txt. [script:two_turns]", { isolation: "worktree" })
      const patchId = (first.patch as { patch_id: string }).patch_id
      world.model.reset()
      // The discard is sent a little later each round, so both orders of the two calls' steps occur.
      const discard = Bun.sleep(round * 2).then(() => mcp.call("patch_discard", { patch_id: patchId }))
      const [continued, discarded] = await Promise.all([
        mcp.call("task_continue", { task_id: first.task_id, task: "Write two.txt." }),
        discard,
      ])
      const patchExists = existsSync(`${world.home.paths.patchesDir}/${patchId}.json`)
      if (!continued.isError) {
        // The continue won: the patch stayed (the discard was refused) and holds the new round.
        expect(discarded.isError).toBe(true)
        expect(patchExists).toBe(true)
        expect(
          (structuredOf(continued).patch as { files: Array<{ path: string }> }).files.map((file) => file.path),
        ).toEqual(["one.txt", "two.txt"])
        expect((await mcp.call("patch_discard", { patch_id: patchId })).isError).toBeFalsy()
        outcomes.push("continued")
      } else {
        expect(world.model.stepRequests()).toEqual([])
        if (!discarded.isError) expect(patchExists).toBe(false)
        else expect((await mcp.call("patch_discard", { patch_id: patchId })).isError).toBeFalsy()
        outcomes.push(discarded.isError ? "both refused" : "discarded")
      }
    }
    // Whichever won, each round ended one way; the rounds are not timed.
    expect(outcomes.length).toBe(8)
  }, 300_000)
})

describe("a continued task runs only in the directory it ran in", () => {
  test("an in-place task's workspace replaced by a symlink to another repository: the continue is refused and that repository untouched; restored, it runs (control)", async () => {
    const parent = await scratch(world)
    const repo = `${parent}/a`
    await rename(await makeRepo(world), repo)
    const other = await makeRepo(world)
    await writeFile(`${other}/b-secret.txt`, `${B_SECRET}\n`)
    const first = await worker(repo, "Write one.txt. [script:two_turns]")
    await rename(repo, `${parent}/a.moved`)
    await symlink(other, repo)
    const before = await listing(other)
    expect(await refusedContinue({ task_id: first.task_id, task: "Write two.txt." })).toContain(
      `its workspace ${repo} now resolves to ${other}, another directory`,
    )
    expect(await listing(other)).toEqual(before)
    await rm(repo)
    await rename(`${parent}/a.moved`, repo)
    expect(
      structuredOf(await mcp.call("task_continue", { task_id: first.task_id, task: "Write two.txt." })).status,
    ).toBe("succeeded")
    expect(await Bun.file(`${repo}/two.txt`).text()).toBe("2\n")
  }, 180_000)
})

describe("every continue passes the policy gate a new call passes", () => {
  test("runners in a repository marked sensitive after they ran: the writable one's continue is refused, the read-only one's runs (control)", async () => {
    const repo = await makeRepo(world)
    const run = async (access: string) => {
      const out = structuredOf(
        await mcp.call("runner", {
          cwd: repo,
          command: "true",
          objective: "see it pass [script:runner_two]",
          workspace_access: access,
        }),
      )
      expect(["succeeded", "needs_review"]).toContain(out.status)
      return out.task_id
    }
    const writable = await run("writable")
    const readOnly = await run("read_only")
    await mkdir(`${repo}/.claude`, { recursive: true })
    await writeFile(`${repo}/.claude/sensitive`, "")
    expect(await refusedContinue({ task_id: writable, task: "Run it again." })).toContain(
      "Refused by policy (sensitive mode): A runner with a writable workspace is refused",
    )
    expect(["succeeded", "needs_review"]).toContain(
      structuredOf(await mcp.call("task_continue", { task_id: readOnly, task: "Run it again." })).status,
    )
  }, 180_000)

  test("a repository marked .claude/sensitive after the worker ran: a non-mechanical continue is refused; the marker gone, the continue runs (blueprint control)", async () => {
    const repo = await makeRepo(world)
    const first = await worker(repo, "Write one.txt. [script:two_turns]")
    await mkdir(`${repo}/.claude`, { recursive: true })
    await writeFile(`${repo}/.claude/sensitive`, "")
    const text = await refusedContinue({ task_id: first.task_id, task: "Write two.txt." })
    expect(text).toContain("Refused by policy (sensitive mode)")
    expect(text).toContain(`marker file ${repo}/.claude/sensitive`)
    expect(existsSync(`${repo}/two.txt`)).toBe(false)

    // The marker gone is still obeyed (the agent may have removed it): the continue stays refused until the
    // person's removal is stated through the policy tool.
    await rm(`${repo}/.claude`, { recursive: true })
    expect(await refusedContinue({ task_id: first.task_id, task: "Write two.txt." })).toContain(
      "(missing; remembered until released)",
    )
    await mcp.call("policy", { cwd: repo, release_missing_markers: true })
    const again = structuredOf(await mcp.call("task_continue", { task_id: first.task_id, task: "Write two.txt." }))
    expect(again.status).toBe("succeeded")
    expect(await Bun.file(`${repo}/two.txt`).text()).toBe("2\n")
    expect(again.warnings ?? []).toEqual([])
  }, 180_000)

  test("a mechanical worker in a sensitive repository: a continue not stated mechanical is refused; a mechanical one runs (control)", async () => {
    const repo = await makeRepo(world)
    await mkdir(`${repo}/.claude`, { recursive: true })
    await writeFile(`${repo}/.claude/sensitive`, "")
    // Control of the premise: a new non-mechanical worker there is refused by the same rule.
    expect(textOf(await mcp.call("worker", { cwd: repo, task: "Write one.txt. [script:two_turns]" }))).toContain(
      "Refused by policy (sensitive mode)",
    )
    const first = await worker(repo, "Write one.txt. [script:two_turns]", { mechanical: true })
    for (const args of [{}, { mechanical: false }]) {
      const text = await refusedContinue({
        task_id: first.task_id,
        task: "Now redesign whatever you think needs it.",
        ...args,
      })
      expect(text).toContain("Refused by policy (sensitive mode): A worker is refused")
      expect(text).toContain("mechanical: true")
    }
    expect(existsSync(`${repo}/two.txt`)).toBe(false)
    const again = structuredOf(
      await mcp.call("task_continue", {
        task_id: first.task_id,
        task: "Write two.txt containing 2.",
        mechanical: true,
      }),
    )
    expect(again.status).toBe("succeeded")
    expect(await Bun.file(`${repo}/two.txt`).text()).toBe("2\n")
    expect((again.warnings ?? []).filter((warning) => warning.includes("weakened"))).toEqual([])
  }, 180_000)

  test('a continue marked tier "hard" or "unsure" is refused; "easy" runs (control)', async () => {
    const repo = await makeRepo(world)
    const first = await worker(repo, "Write one.txt. [script:two_turns]")
    for (const tier of ["hard", "unsure"])
      expect(await refusedContinue({ task_id: first.task_id, task: "Write two.txt.", tier })).toContain(
        `Refused by policy (tier): A delegation marked tier "${tier}"`,
      )
    expect(existsSync(`${repo}/two.txt`)).toBe(false)
    expect(
      structuredOf(await mcp.call("task_continue", { task_id: first.task_id, task: "Write two.txt.", tier: "easy" }))
        .status,
    ).toBe("succeeded")
  }, 180_000)

  test("a continue whose secret the guard finds is refused, as a new call's brief would be", async () => {
    const repo = await makeRepo(world)
    const first = await worker(repo, "Write one.txt. [script:two_turns]")
    const token = `ghp_${"a1B2c3D4e5F6g7H8i9J0".repeat(2).slice(0, 36)}`
    const text = await refusedContinue({ task_id: first.task_id, task: `Push with ${token}.` })
    expect(text).toContain("Refused by policy (secret guard)")
    expect(text).not.toContain(token.slice(4))
  }, 120_000)

  for (const isolation of ["worktree", "in_place"] as const)
    test(`a workspace the admission now refuses (project plugin planted in the repository, ${isolation}): the continue is refused; the plugin gone, it runs (control)`, async () => {
      const repo = await makeRepo(world)
      const first = await worker(repo, "Write one.txt. [script:two_turns]", { isolation })
      await mkdir(`${repo}/.opencode/plugins`, { recursive: true })
      await writeFile(`${repo}/.opencode/plugins/evil.js`, "export default async () => ({})\n")
      const text = await refusedContinue({ task_id: first.task_id, task: "Write two.txt." })
      expect(text).toContain(
        `Refusing workspace ${repo}: OpenCode would run project plugin code from ${repo}/.opencode/plugins/evil.js`,
      )
      await rm(`${repo}/.opencode`, { recursive: true })
      expect(
        structuredOf(await mcp.call("task_continue", { task_id: first.task_id, task: "Write two.txt." })).status,
      ).toBe("succeeded")
    }, 180_000)
})

describe("a mode that weakened since the task's previous call is reported", () => {
  test("a record whose kept calls are garbage is moved aside: the continue is refused, not run unchecked", async () => {
    const repo = await makeRepo(world)
    const first = await worker(repo, "Write one.txt. [script:two_turns]")
    const file = `${world.home.paths.tasksDir}/${String(first.task_id)}.json`
    const kept = await record(first.task_id)
    for (const calls of ["sensitive", [{ turn: 1, mode: "paranoid", source: "x", delegation: { role: "worker" } }]]) {
      await writeFile(file, JSON.stringify({ ...kept, calls }))
      expect(await refusedContinue({ task_id: first.task_id, task: "Write two.txt." })).toContain(
        `No task ${first.task_id}`,
      )
      expect(existsSync(`${file}.corrupt`)).toBe(true)
      await rm(`${file}.corrupt`)
    }
    // Control: the record as it was continues.
    await writeFile(file, JSON.stringify(kept))
    expect(
      structuredOf(await mcp.call("task_continue", { task_id: first.task_id, task: "Write two.txt." })).status,
    ).toBe("succeeded")
    expect(await Bun.file(`${repo}/two.txt`).text()).toBe("2\n")
  }, 120_000)

  test("a mechanical worker cannot delete the sensitive marker; deleted on the host, the next continue stays sensitive and says so; released by the parent, it runs in blueprint and says the mode weakened", async () => {
    const repo = await makeRepo(world)
    const marker = `${repo}/.opencode-mcp-orchestrator/sensitive`
    await mkdir(`${repo}/.opencode-mcp-orchestrator`, { recursive: true })
    await writeFile(marker, "")
    const first = structuredOf(
      await mcp.call("worker", { cwd: repo, task: "Tidy up. [script:drop_marker]", mechanical: true }),
    )
    expect(["succeeded", "needs_review"]).toContain(first.status)
    // The marker's folder is a read-only mount: the agent's rm fails.
    expect(existsSync(marker)).toBe(true)
    await rm(marker)
    const kept = structuredOf(
      await mcp.call("task_continue", { task_id: first.task_id, task: "Write after.txt.", mechanical: true }),
    )
    expect(kept.status).toBe("succeeded")
    expect(String(kept.warnings)).toContain(`Sensitive markers this product saw here are gone: ${marker}`)
    expect((await mcp.call("policy", { cwd: repo, release_missing_markers: true })).isError).toBeFalsy()
    const again = structuredOf(await mcp.call("task_continue", { task_id: first.task_id, task: "Write later.txt." }))
    expect(again.status).toBe("succeeded")
    const warning = (again.warnings ?? []).find((line) => line.includes("weakened"))
    expect(warning).toContain("it was sensitive (marker file")
    expect(warning).toContain("now blueprint (the default: nothing states a mode)")
    expect((await record(first.task_id)).calls?.map((call) => [call.turn, call.mode])).toEqual([
      [1, "sensitive"],
      [2, "sensitive"],
      [3, "blueprint"],
    ])
  }, 180_000)
})
