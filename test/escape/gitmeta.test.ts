// Attacks through a workspace's Git metadata and the policy markers' root, through the real OpenCode on
// the scripted model. A `.git` pointer (an archive's, or one a worker's shell plants) must not mount
// another repository or HOME's dotfiles repository into a sandbox: refused at admission before any
// record, lock or session, and by the plugin inside a session forced there. A `.git` planted below a
// repository's root must not hide its sensitive marker. Each beside a control that succeeds.
import { beforeAll, describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { mkdir, readdir, writeFile } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { hostContext, hostFs, planSandbox, runSandboxed } from "../../src/sandbox"
import { run, spawn } from "../../src/util/process"
import { battery, makeRepo, runAgent, scratch, structuredOf, taskCount, textOf } from "./_world"
import { git } from "../helpers/git"
import { SCOUT, WORKER, done, shell } from "../helpers/steps"

const VICTIM_NOTE = "VICTIM-REPOSITORY-NOTE-51d0"
const TOKEN = "ghp_victimTokenZ9q8w7e6r5t4y3u2i1o0"
const SSH_KEY = "DOTFILES-SSH-KEY-7f3a"
const AWS_KEY = "DOTFILES-AWS-SECRET-c4e1"
const MAIN_NOTE = "MAIN-REPOSITORY-NOTE-0b9e"
/** What a scout tries: the repository its `.git` leads to, as git inside the sandbox sees it. */
const EXFILTRATE =
  "git show HEAD:NOTE.txt; git show HEAD:.ssh/id_rsa; git show HEAD:.aws/credentials; git config --get remote.origin.url; echo END"
const LEAKS = [VICTIM_NOTE, TOKEN, SSH_KEY, AWS_KEY]

const { world, mcp } = battery({ exfiltrate: { turns: [{ steps: [shell(EXFILTRATE), done] }] } })
let home: string
let victim: string
let dotfiles: string

beforeAll(async () => {
  home = world.home.root
  await mkdir(`${home}/.ssh`, { recursive: true })
  await mkdir(`${home}/.aws`, { recursive: true })
  await writeFile(`${home}/.ssh/id_rsa`, `${SSH_KEY}\n`)
  await writeFile(`${home}/.aws/credentials`, `aws_secret_access_key=${AWS_KEY}\n`)
  // A bare dotfiles repository in HOME tracking the keys (the `git --git-dir=~/.dotfiles --work-tree=~` habit).
  dotfiles = `${home}/.dotfiles`
  await git(home, "init", "-q", "--bare", dotfiles)
  await git(home, `--git-dir=${dotfiles}`, `--work-tree=${home}`, "add", ".ssh/id_rsa", ".aws/credentials")
  await git(home, `--git-dir=${dotfiles}`, `--work-tree=${home}`, "commit", "-qm", "dotfiles")
  // Another repository on the machine, with a token in its remote URL.
  victim = await makeRepo(world)
  await writeFile(`${victim}/NOTE.txt`, `${VICTIM_NOTE}\n`)
  await git(victim, "add", "NOTE.txt")
  await git(victim, "commit", "-qm", "note")
  await git(victim, "remote", "add", "origin", `https://x:${TOKEN}@example.invalid/victim.git`)
}, 120_000)

/** A directory that is no clone (an extracted archive), holding only what `plant` writes. */
async function archive(plant: (dir: string) => Promise<void>): Promise<string> {
  const dir = await scratch(world, "oc-orch-archive-")
  await writeFile(`${dir}/README.md`, "# archive\n")
  await plant(dir)
  return dir
}

const pointers: [string, (dir: string) => Promise<void>, RegExp][] = [
  [
    "a .git file naming another repository's .git",
    (dir) => writeFile(`${dir}/.git`, `gitdir: ${victim}/.git\n`),
    /does not link back to this workspace/,
  ],
  [
    "the same pointer, relative",
    async (dir) => writeFile(`${dir}/.git`, `gitdir: ../${victim.split("/").pop()}/.git\n`),
    /does not link back/,
  ],
  [
    "a .git file naming HOME's dotfiles repository",
    (dir) => writeFile(`${dir}/.git`, `gitdir: ${dotfiles}\n`),
    /does not link back to this workspace/,
  ],
  [
    "a .git directory whose commondir is HOME's dotfiles repository",
    async (dir) => {
      await mkdir(`${dir}/.git`)
      await writeFile(`${dir}/.git/HEAD`, "ref: refs/heads/master\n")
      await writeFile(`${dir}/.git/commondir`, `${dotfiles}\n`)
    },
    /names a common dir/,
  ],
  [
    "a forged worktrees/<name> gitdir linking back, whose commondir is another repository",
    async (dir) => {
      await mkdir(`${dir}/.meta/worktrees/x`, { recursive: true })
      await writeFile(`${dir}/.meta/worktrees/x/HEAD`, "ref: refs/heads/master\n")
      await writeFile(`${dir}/.meta/worktrees/x/gitdir`, `${dir}/.git\n`)
      await writeFile(`${dir}/.meta/worktrees/x/commondir`, `${victim}/.git\n`)
      await writeFile(`${dir}/.git`, "gitdir: .meta/worktrees/x\n")
    },
    /is not one of its worktrees/,
  ],
]

describe("a .git pointer never mounts another repository or HOME", () => {
  test("control: the planted pointers are real: git on the host follows them to the victim and the dotfiles", async () => {
    const toVictim = await archive((dir) => writeFile(`${dir}/.git`, `gitdir: ${victim}/.git\n`))
    expect(await git(toVictim, "show", "HEAD:NOTE.txt")).toContain(VICTIM_NOTE)
    expect(await git(toVictim, "config", "--get", "remote.origin.url")).toContain(TOKEN)
    const toDotfiles = await archive((dir) => writeFile(`${dir}/.git`, `gitdir: ${dotfiles}\n`))
    expect(await git(toDotfiles, "show", "HEAD:.ssh/id_rsa")).toContain(SSH_KEY)
  })

  test.each(pointers)("%s: the scout is refused before any record, lock or session", async (_, plant, rule) => {
    const dir = await archive(plant)
    const requests = world.model.stepRequests().length
    const tasks = await taskCount(world)
    const result = await mcp.call("scout", { cwd: dir, task: "[script:exfiltrate] read the repository" })
    expect(result.isError).toBe(true)
    const text = textOf(result)
    expect(text).toMatch(/^Refusing workspace .*: its Git metadata /m)
    expect(text).toMatch(rule)
    expect(text).toContain("next: ")
    for (const leak of LEAKS) expect(text).not.toContain(leak)
    expect(world.model.stepRequests().length).toBe(requests)
    expect(await taskCount(world)).toBe(tasks)
    expect(await readdir(world.home.paths.locksDir).catch(() => [])).toEqual([])
  })

  test.each(pointers)(
    "%s: a session forced there (no MCP admission) gets nothing from the plugin",
    async (_, plant) => {
      const dir = await archive(plant)
      const { results } = await runAgent(world, SCOUT, dir, "exfiltrate")
      expect(results.map((r) => r.tool)).toEqual(["sandbox_shell"])
      expect(results[0]!.output).toMatch(/Refusing workspace .*: its Git metadata/)
      for (const leak of LEAKS) expect(results[0]!.output).not.toContain(leak)
    },
  )

  test("a worker that plants the pointer by its sandboxed shell is refused at its next tool, and so is the next scout", async () => {
    const dir = await archive(async () => {})
    world.model.setScript("plant_pointer", {
      turns: [{ steps: [shell(`printf 'gitdir: ${victim}/.git\\n' > .git && echo planted`), shell(EXFILTRATE), done] }],
    })
    const worker = await mcp.call("worker", { cwd: dir, task: "[script:plant_pointer] tidy up" })
    expect(textOf(worker)).not.toContain("Refused by policy")
    const results = world.model.toolResults().slice(-2)
    expect(results[0]!.output).toStartWith("planted")
    expect(results[1]!.output).toMatch(/^Refusing workspace .*: its Git metadata/)
    for (const leak of LEAKS) expect(JSON.stringify(structuredOf(worker))).not.toContain(leak)
    const tasks = await taskCount(world)
    const scout = await mcp.call("scout", { cwd: dir, task: "[script:exfiltrate] read" })
    expect(scout.isError).toBe(true)
    expect(textOf(scout)).toContain(`delete ${dir}/.git`)
    expect(await taskCount(world)).toBe(tasks)
  })

  test("control: a genuine `git worktree add` worktree is admitted, and git in its sandbox reads the shared repository", async () => {
    const main = await makeRepo(world)
    await writeFile(`${main}/NOTE.txt`, `${MAIN_NOTE}\n`)
    await git(main, "add", "NOTE.txt")
    await git(main, "commit", "-qm", "note")
    const linked = `${await scratch(world, "oc-orch-linked-")}/wt`
    await git(main, "worktree", "add", "-q", linked)
    const result = await mcp.call("scout", { cwd: linked, task: "[script:exfiltrate] read the repository" })
    expect(structuredOf(result).status).toBe("succeeded")
    expect(textOf(result)).toContain(MAIN_NOTE)
    expect(textOf(result)).toContain("END")
  })

  test("an isolated worker below a refused pointer is refused with the rule: the snapshot never follows it", async () => {
    const dir = await archive((root) => writeFile(`${root}/.git`, `gitdir: ${victim}/.git\n`))
    await mkdir(`${dir}/pkg`)
    world.model.setScript("touch_note", {
      turns: [{ steps: [{ tool: "write", args: { filePath: "NOTE.md", content: "n\n" } }, done] }],
    })
    const result = await mcp.call("worker", {
      cwd: `${dir}/pkg`,
      task: "[script:touch_note] write a note",
      isolation: "worktree",
    })
    expect(result.isError).toBe(true)
    expect(textOf(result)).toMatch(/Refusing workspace .*: its Git metadata .*does not link back/)
    for (const leak of LEAKS) expect(textOf(result)).not.toContain(leak)
  })

  test("control: an isolated worker in a genuine linked worktree snapshots it and returns a patch", async () => {
    const main = await makeRepo(world)
    const linked = `${await scratch(world, "oc-orch-linked-")}/wt`
    await git(main, "worktree", "add", "-q", linked)
    world.model.setScript("touch_note", {
      turns: [{ steps: [{ tool: "write", args: { filePath: "NOTE.md", content: "n\n" } }, done] }],
    })
    const result = await mcp.call("worker", {
      cwd: linked,
      task: "[script:touch_note] write a note",
      isolation: "worktree",
    })
    expect(structuredOf(result).status).toBe("succeeded")
    const patch = structuredOf(result).patch as { patch_id: string; files: { path: string; change: string }[] }
    expect(patch.patch_id).toMatch(/^patch_/)
    expect(patch.files).toMatchObject([{ path: "NOTE.md", change: "added" }])
    expect(existsSync(`${linked}/NOTE.md`)).toBe(false)
  })

  test("control: a plain clone is admitted and git in its sandbox works", async () => {
    const clone = `${await scratch(world, "oc-orch-clone-")}/clone`
    await git(victim, "clone", "-q", victim, clone)
    const result = await mcp.call("scout", { cwd: clone, task: "[script:exfiltrate] read the repository" })
    expect(structuredOf(result).status).toBe("succeeded")
    expect(textOf(result)).toContain(VICTIM_NOTE)
  })
})

describe("a planted .git never hides the repository's sensitive marker", () => {
  const plants = {
    "a .git directory":
      "mkdir -p pkg/.git/objects pkg/.git/refs && printf 'ref: refs/heads/main\\n' > pkg/.git/HEAD && echo planted",
    "a .git file": "printf 'gitdir: ../.git\\n' > pkg/.git && echo planted",
  }

  async function plantedRepo(marked: boolean, plant: string): Promise<string> {
    const repo = await makeRepo(world)
    await mkdir(`${repo}/pkg`)
    await writeFile(`${repo}/pkg/a.txt`, "a\n")
    if (marked) {
      await mkdir(`${repo}/.opencode-mcp-orchestrator`)
      await writeFile(`${repo}/.opencode-mcp-orchestrator/sensitive`, "")
    }
    world.model.setScript("plant_git", { turns: [{ steps: [shell(plant), done] }] })
    // Sensitive mode still lets a mechanical worker run: the one that plants the .git.
    const planter = await mcp.call("worker", { cwd: repo, task: "[script:plant_git] rename a to b", mechanical: true })
    // It ran (needs_review: a planted .git is reported to the parent, and stays planted).
    expect(planter.isError).toBeFalsy()
    expect(["succeeded", "needs_review"]).toContain(structuredOf(planter).status)
    expect(world.model.toolResults().at(-1)?.output).toStartWith("planted")
    expect(existsSync(`${repo}/pkg/.git`)).toBe(true)
    return repo
  }

  for (const [kind, plant] of Object.entries(plants)) {
    test(`${kind} planted in pkg by a worker's shell: a call in pkg is still sensitive`, async () => {
      const repo = await plantedRepo(true, plant)
      const policy = structuredOf(await mcp.call("policy", { cwd: `${repo}/pkg` }))
      expect(policy).toMatchObject({
        mode: "sensitive",
        source: `marker file ${repo}/.opencode-mcp-orchestrator/sensitive`,
        project_root: repo,
      })
      const tasks = await taskCount(world)
      const worker = await mcp.call("worker", { cwd: `${repo}/pkg`, task: "[script:plant_git] rewrite everything" })
      expect(worker.isError).toBe(true)
      expect(textOf(worker)).toContain("Refused by policy (sensitive mode)")
      expect(textOf(worker)).toContain(`${repo}/.opencode-mcp-orchestrator/sensitive`)
      expect(await taskCount(world)).toBe(tasks)
    })

    test(`control (${kind}): without the marker the same call in pkg runs in blueprint`, async () => {
      const repo = await plantedRepo(false, plant)
      expect(structuredOf(await mcp.call("policy", { cwd: `${repo}/pkg` }))).toMatchObject({ mode: "blueprint" })
      world.model.setScript("noop", { turns: [{ steps: [{ text: "nothing to do" }] }] })
      const worker = await mcp.call("worker", { cwd: `${repo}/pkg`, task: "[script:noop] rewrite everything" })
      expect(textOf(worker)).not.toContain("Refused by policy")
      if (kind === "a .git directory") expect(structuredOf(worker).status).toBe("succeeded")
    })
  }
})

/** Exchanges two paths as fast as it can for `seconds` (one atomic renameat2 each time). */
/**
 * Exchanges `a` and `b` (renameat2 RENAME_EXCHANGE) for `seconds`; with `holdMs`, each state is held that
 * long, so a command can also start and finish in one state (the swap still lands mid-start at every turn).
 */
const swapper = (a: string, b: string, seconds: number, holdMs = 0) =>
  `python3 -c 'import ctypes,time
l=ctypes.CDLL(None,use_errno=True);e=time.time()+${seconds}
while time.time()<e:
  l.renameat2(-100,b"${a}",-100,b"${b}",2)
  time.sleep(${holdMs / 1000})'`

describe("a checked mount swapped while bwrap starts", () => {
  /** A repository whose `sub/` a writer in the repository can exchange with a link to ~/.ssh. */
  async function nested(): Promise<string> {
    const repo = await makeRepo(world)
    await mkdir(`${repo}/sub`)
    await writeFile(`${repo}/sub/mine.txt`, "mine\n")
    await run(["ln", "-s", `${home}/.ssh`, `${repo}/sublink`])
    return repo
  }

  test("control: planning and starting bwrap without the pins loses the race to a swapping process", async () => {
    const repo = await nested()
    const host = hostContext(readFlags({ HOME: home, PATH: "/usr/bin:/bin" }))
    const swap = spawn(["bash", "-c", swapper("sub", "sublink", 20)], { cwd: repo })
    let leaked = 0
    try {
      // Until the swapper's own end: how soon the race is won depends on the machine, not a count.
      const end = Date.now() + 15_000
      while (Date.now() < end && !leaked) {
        let plan: ReturnType<typeof planSandbox>
        try {
          plan = planSandbox({ profile: { kind: "scout" }, workspace: `${repo}/sub`, host }, hostFs)
        } catch {
          continue // the planner saw the link this time
        }
        const result = await runSandboxed({ ...plan, pins: [] }, ["/bin/cat", "id_rsa"], {
          timeoutMs: 5000,
          maxOutputBytes: 4096,
        })
        if (result.stdout.includes(SSH_KEY)) leaked++
      }
    } finally {
      await swap.kill(500)
    }
    expect(leaked).toBeGreaterThan(0)
  }, 60_000)

  test("a worker in the repository swaps sub for a link to ~/.ssh while a scout in sub runs 48 shells: no key read", async () => {
    const repo = await nested()
    world.model.setScript("swap_sub", {
      // Each state held 300 ms: a shell can meet the real sub whole, or the swap mid-start, however loaded.
      turns: [{ steps: [shell(`${swapper("sub", "sublink", 30, 300)}; echo swapped`), done] }],
    })
    // Six parallel shells a step (the scout's step budget is small), each command distinct.
    const steps = Array.from({ length: 8 }, (_, step) => ({
      tools: Array.from({ length: 6 }, (_, i) => shell(`cat mine.txt id_rsa 2>&1; echo read ${step}.${i}`)),
    }))
    // The scout's session starts before the swap (in the real sub); its reads wait until the swap runs.
    const ready = shell("echo session-started")
    world.model.setScript("read_sub", {
      turns: [{ steps: [ready, { ...steps[0]!, delayMs: 4000 }, ...steps.slice(1), done] }],
    })
    const before = world.model.toolResults().length
    const scout = runAgent(world, SCOUT, `${repo}/sub`, "read_sub")
    while (
      !world.model
        .toolResults()
        .slice(before)
        .some((r) => r.args.includes("session-started"))
    )
      await Bun.sleep(50)
    const worker = runAgent(world, WORKER, repo, "swap_sub")
    const started = await scout.then(
      () => true,
      () => false,
    )
    await worker
    expect(started).toBe(true)
    // Concurrent sessions: each result is told apart by the command it answers.
    const results = world.model.toolResults().slice(before)
    expect(results.find((r) => r.args.includes("sublink"))?.output).toContain("swapped")
    const outputs = results.filter((r) => r.args.includes("echo read")).map((r) => r.output)
    expect(outputs.length).toBeGreaterThanOrEqual(24)
    for (const output of outputs) expect(output).not.toContain(SSH_KEY)
    // Both states were met: some shells ran in the real sub, some met the swap and ran nothing (refused
    // at admission, or, when the swap fell between the checks and the mount, by the pin check).
    expect(outputs.some((o) => o.includes("mine"))).toBe(true)
    expect(outputs.some((o) => !o.includes("mine"))).toBe(true)
  }, 120_000)
})
