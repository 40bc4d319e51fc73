// A scoped worker's `sandbox_shell` under the kernel: the workspace mounted read-only and only the scope's
// existing paths bound writable, through the real OpenCode on the scripted model. Attacks: a write, a new
// directory and a delete outside the scope each fail read-only and leave the disk as it was; a scoped path
// that is a symlink to a directory outside the workspace (or under a symlinked directory) stays read-only;
// a process exchanging a scoped directory (or its parent) with such a symlink while commands run never
// gets a write outside; a session whose scope cannot be read gets the whole workspace read-only. Controls:
// the same commands inside the scope succeed, a worker without `scope` can do them all, and without the
// pins the same race writes outside. (bwrap 0.12 itself refuses a swap made once before it starts: only
// the window between its resolving the source and the destination leaks, so the control races too.)
import { describe, expect, test } from "bun:test"
import { existsSync, readdirSync } from "node:fs"
import { mkdir, readFile, symlink, writeFile } from "node:fs/promises"
import { readFlags } from "../../src/config/flags"
import { runTurn } from "../../src/engine/turn/turn"
import { parseModel, unwrap } from "../../src/opencode/session"
import { hostContext, hostFs, planSandbox, runSandboxed } from "../../src/sandbox"
import { spawn } from "../../src/util/process"
import { commitRepo } from "../helpers/git"
import { done, shell, WORKER } from "../helpers/steps"
import { battery, scratch, structuredOf } from "./_world"

/** Exchanges two paths as fast as it can for `seconds` (one atomic renameat2 each time). */
const swapper = (a: string, b: string, seconds: number) =>
  `python3 -c 'import ctypes,time
l=ctypes.CDLL(None,use_errno=True);e=time.time()+${seconds}
while time.time()<e: l.renameat2(-100,b"${a}",-100,b"${b}",2)'`

const FILES = {
  "README.md": "# fixture\n",
  "lib/keep.ts": "keep\n",
  "src/old.ts": "old\n",
  "test/a.test.ts": "a\n",
  "notes.md": "notes\n",
}
const SCOPE = ["src/**", "test/*.test.ts", "notes.md"]
const OUTSIDE = [
  "echo pwned > README.md",
  "mkdir other && touch other/x",
  "rm lib/keep.ts",
  "echo new > test/b.test.ts",
  "echo pwned > lib/keep.ts",
]
const INSIDE = ["echo new > src/new.ts", "mkdir src/d && touch src/d/x", "rm src/old.ts", "echo y > notes.md"]
const tagged = (commands: readonly string[]) => commands.map((command, i) => shell(`${command}; echo "exit ${i}: $?"`))

const { world, mcp } = battery({
  outside: { turns: [{ steps: [...tagged(OUTSIDE), done] }] },
  inside: { turns: [{ steps: [...tagged(INSIDE), shell("echo x > test/a.test.ts; echo $?"), done] }] },
  links: {
    turns: [{ steps: [...tagged(["echo pwned > src/f", "echo pwned > deep/in/f", "echo x > notes.md"]), done] }],
  },
})

const repo = async () => commitRepo(await scratch(world), FILES)

/** One worker turn straight on a session (no MCP call's timeout): its tool outputs, in order. */
async function turn(cwd: string, script: string, more: { scope?: string[]; sessionID?: string }) {
  const { client, hub } = await world.runtime.opencode()
  const before = world.model.toolResults().length
  await runTurn(
    {
      client,
      hub,
      workspace: cwd,
      agent: WORKER,
      title: `scope-kernel ${script}`,
      route: parseModel("scripted/fast"),
      deadline: Date.now() + 150_000,
      signal: new AbortController().signal,
      ...more,
      onSession: async () => {},
      onProgress: () => {},
    },
    `[script:${script}] edit`,
  )
  return world.model
    .toolResults()
    .slice(before)
    .map((r) => r.output)
}

/** The worker's tool outputs for one call, in order. */
async function worker(args: Record<string, unknown>) {
  const before = world.model.toolResults().length
  const result = await mcp.call("worker", args)
  return {
    out: structuredOf(result),
    outputs: world.model
      .toolResults()
      .slice(before)
      .map((r) => r.output),
  }
}

describe("a scoped worker's shell", () => {
  test("attack: a write, a new directory, a delete and a new glob match outside the scope fail read-only", async () => {
    const cwd = await repo()
    const { out, outputs } = await worker({ cwd, task: "[script:outside] edit", scope: SCOPE })
    expect(outputs.length).toBe(OUTSIDE.length)
    outputs.forEach((output, i) => {
      expect(output).toContain("Read-only file system")
      expect(output).not.toContain(`exit ${i}: 0`)
    })
    expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("# fixture\n")
    expect(await readFile(`${cwd}/lib/keep.ts`, "utf8")).toBe("keep\n")
    expect(existsSync(`${cwd}/other`)).toBe(false)
    expect(existsSync(`${cwd}/test/b.test.ts`)).toBe(false)
    expect(out.status).toBe("succeeded")
  }, 120_000)

  test("control: the same worker's commands inside the scope succeed", async () => {
    const cwd = await repo()
    const { out, outputs } = await worker({ cwd, task: "[script:inside] edit", scope: SCOPE })
    for (const i of INSIDE.keys()) expect(outputs[i]).toContain(`exit ${i}: 0`)
    expect(outputs.join("\n")).not.toContain("read-only")
    expect(await readFile(`${cwd}/src/new.ts`, "utf8")).toBe("new\n")
    expect(existsSync(`${cwd}/src/d/x`)).toBe(true)
    expect(existsSync(`${cwd}/src/old.ts`)).toBe(false)
    expect(await readFile(`${cwd}/notes.md`, "utf8")).toBe("y\n")
    expect(await readFile(`${cwd}/test/a.test.ts`, "utf8")).toBe("x\n")
    expect(out.status).toBe("succeeded")
  }, 120_000)

  test("control: a worker without scope can do every one of the outside commands", async () => {
    const cwd = await repo()
    const { outputs } = await worker({ cwd, task: "[script:outside] edit" })
    for (const i of OUTSIDE.keys()) expect(outputs[i]).toContain(`exit ${i}: 0`)
    expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("pwned\n")
    expect(existsSync(`${cwd}/other/x`)).toBe(true)
    expect(await readFile(`${cwd}/test/b.test.ts`, "utf8")).toBe("new\n")
  }, 120_000)

  test("attack: scoped paths that are symlinks out of the workspace stay read-only, said in one line", async () => {
    const cwd = await scratch(world)
    const away = await scratch(world)
    await mkdir(`${away}/in`)
    await writeFile(`${away}/notes.md`, "theirs\n")
    await commitRepo(cwd, { "README.md": "# fixture\n" })
    await symlink(away, `${cwd}/src`)
    await symlink(away, `${cwd}/deep`)
    await symlink(`${away}/notes.md`, `${cwd}/notes.md`)
    const { outputs } = await worker({ cwd, task: "[script:links] edit", scope: ["src/**", "deep/in/**", "notes.md"] })
    expect(outputs.length).toBe(3)
    outputs.forEach((output, i) => {
      expect(output.split("\n")[0]).toBe(
        "[read-only in your scope: src (a symlink), deep (a symlink), notes.md (a symlink)]",
      )
      // Inside, each link leads nowhere (the outside is not mounted) or to the read-only workspace.
      expect(output).not.toContain(`exit ${i}: 0`)
    })
    expect(readdirSync(away).sort()).toEqual(["in", "notes.md"])
    expect(readdirSync(`${away}/in`)).toEqual([])
    expect(await readFile(`${away}/notes.md`, "utf8")).toBe("theirs\n")
  }, 120_000)
})

describe("a session whose scope cannot be read", () => {
  test("attack: edit rules naming no scope (not the engine's) leave the whole workspace read-only", async () => {
    const cwd = await repo()
    const { client } = await world.runtime.opencode()
    const permission = [
      { permission: "edit", pattern: "*", action: "deny" as const },
      { permission: "edit", pattern: "src/*", action: "allow" as const },
    ]
    const session = unwrap(await client.session.create({ directory: cwd, title: "unread scope", permission }), "create")
    const outputs = await turn(cwd, "inside", { sessionID: session.id })
    expect(outputs.length).toBe(INSIDE.length + 1)
    for (const output of outputs) expect(output.split("\n")[0]).toContain("[read-only: the whole workspace")
    expect(existsSync(`${cwd}/src/new.ts`)).toBe(false)
    expect(await readFile(`${cwd}/src/old.ts`, "utf8")).toBe("old\n")
  }, 120_000)
})

describe("a scoped directory exchanged with a symlink out of the workspace while commands run", () => {
  async function racing(): Promise<{ cwd: string; away: string }> {
    const cwd = await repo()
    const away = await scratch(world)
    await symlink(away, `${cwd}/srclink`)
    return { cwd, away }
  }

  test("control: the same plan run without its pins writes outside the workspace while the swap runs", async () => {
    const { cwd, away } = await racing()
    const host = hostContext(readFlags({ HOME: world.home.root, PATH: "/usr/bin:/bin" }))
    const swap = spawn(["bash", "-c", swapper("src", "srclink", 50)], { cwd })
    try {
      // Until the swapper's own end: how soon the race is won depends on the machine, not a count.
      const end = Date.now() + 45_000
      while (Date.now() < end && readdirSync(away).length === 0) {
        let plan: ReturnType<typeof planSandbox>
        try {
          plan = planSandbox({ profile: { kind: "worker" }, workspace: cwd, host, scope: ["src/**"] }, hostFs)
        } catch {
          continue // the planner saw the link this time
        }
        await runSandboxed({ ...plan, pins: [] }, ["/bin/bash", "-c", "echo pwned > src/leak"], {
          timeoutMs: 5000,
          maxOutputBytes: 4096,
        })
      }
    } finally {
      await swap.kill(500)
    }
    expect(readdirSync(away)).toContain("leak")
  }, 90_000)

  test("attack: 48 writes into the scoped directory during the exchange never land outside", async () => {
    const { cwd, away } = await racing()
    const steps = Array.from({ length: 8 }, (_, step) => ({
      tools: Array.from({ length: 6 }, (_, i) =>
        shell(`echo pwned > src/f${step}-${i}; echo "wrote ${step}.${i}: $?"`),
      ),
    }))
    world.model.setScript("race", { turns: [{ steps: [...steps, done] }] })
    const swap = spawn(["bash", "-c", swapper("src", "srclink", 150)], { cwd })
    let outputs: string[]
    try {
      outputs = await turn(cwd, "race", { scope: ["src/**"] })
    } finally {
      await swap.kill(500)
    }
    expect(outputs.length).toBe(48)
    expect(readdirSync(away)).toEqual([])
    // Every write that reported success landed in the real directory; the race was met (some were refused).
    const real = existsSync(`${cwd}/src/old.ts`) ? `${cwd}/src` : `${cwd}/srclink`
    const landed = outputs.flatMap((output) => /wrote (\d+)\.(\d+): 0/.exec(output)?.slice(1, 3).join("-") ?? [])
    for (const name of landed) expect(existsSync(`${real}/f${name}`)).toBe(true)
    expect(landed.length).toBeLessThan(48)
  }, 180_000)

  test("attack: 24 writes under a scoped directory, its parent exchanged with a link, never land outside", async () => {
    const cwd = await repo()
    await mkdir(`${cwd}/deep/in`, { recursive: true })
    await writeFile(`${cwd}/deep/in/mine.txt`, "mine\n")
    const away = await scratch(world)
    await mkdir(`${away}/in`)
    await symlink(away, `${cwd}/deeplink`)
    const steps = Array.from({ length: 4 }, (_, step) => ({
      tools: Array.from({ length: 6 }, (_, i) => shell(`echo pwned > deep/in/g${step}-${i}; echo "wrote $?"`)),
    }))
    world.model.setScript("parent_race", { turns: [{ steps: [...steps, done] }] })
    const swap = spawn(["bash", "-c", swapper("deep", "deeplink", 150)], { cwd })
    let outputs: string[]
    try {
      outputs = await turn(cwd, "parent_race", { scope: ["deep/in/**"] })
    } finally {
      await swap.kill(500)
    }
    expect(outputs.length).toBe(24)
    expect(readdirSync(`${away}/in`)).toEqual([])
    expect(readdirSync(away).sort()).toEqual(["in"])
  }, 180_000)
})
