// A scoped worker and a link inside its scope that leads out of it, through the real OpenCode on the
// scripted model. The worker makes `src/readme` → ../README.md (tracked) and `src/env` → ../.env (ignored)
// with its shell (src is its scope, so it may), then writes through them. Attacks: the write tool, the edit
// tool and the shell each meet a read-only file system, the kernel's answer (the file tools get the same
// scoped mounts as the shell); both files stay as they were. Control: the same steps by a worker without
// scope land on both files. Reported if they land: a write the defences would have refused, made by the
// host while the task runs (a stand-in for any hole), is named in out_of_scope for the tracked and the
// ignored file alike, and so is an ignored file removed; controls: git's own status (files_changed) never
// sees the ignored file, and the same writes made before the task started are not named.
import { beforeAll, describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { readFile, rm, writeFile } from "node:fs/promises"
import { commitRepo } from "../helpers/git"
import { done, shell, write } from "../helpers/steps"
import { until } from "../helpers/until"
import { battery, scratch, structuredOf, textOf } from "./_world"

const edit = (filePath: string, oldString: string, newString: string) => ({
  tool: "edit",
  args: { filePath, oldString, newString },
})
const link = shell("ln -s ../README.md src/readme && ln -s ../.env src/env && echo linked")
const SCOPE = ["src/**"]

const { world, mcp } = battery({
  via_write: { turns: [{ steps: [link, write("src/readme", "pwned\n"), write("src/env", "SECRET=pwned\n"), done] }] },
  via_edit: {
    turns: [
      { steps: [link, edit("src/readme", "# fixture", "# pwned"), edit("src/env", "SECRET=1", "SECRET=pwned"), done] },
    ],
  },
  via_shell: {
    turns: [
      {
        steps: [
          link,
          shell("echo pwned > src/readme; echo readme=$?"),
          shell("echo SECRET=pwned > src/env; echo env=$?"),
          done,
        ],
      },
    ],
  },
  idle: { turns: [{ steps: [{ text: "nothing" }] }] },
  // Holds the turn open until the host's writes (the stand-in for a hole) show inside the sandbox.
  bypassed: {
    turns: [
      {
        steps: [
          shell("echo started"),
          shell(
            "for i in $(seq 1200); do grep -q pwned README.md && grep -q pwned .env && [ ! -e cache/old.bin ] && " +
              "break; sleep 0.1; done; echo seen",
          ),
          write("src/tally.ts", "export const n = 1\n"),
          done,
        ],
      },
    ],
  },
})

// The file's first call boots what every later one reuses; on a loaded machine that alone can pass the MCP
// client's 60 s request timeout, which is not what these tests are about. Its outcome is not asserted.
beforeAll(async () => {
  await mcp.call("scout", { cwd: await scratch(world), task: "[script:idle] look" }).catch(() => undefined)
}, 180_000)

/** A repository with a tracked README, an ignored `.env` and an ignored cache file beside the scope. */
async function repo(): Promise<string> {
  const cwd = await commitRepo(await scratch(world), {
    "README.md": "# fixture\n",
    ".gitignore": ".env\ncache/\n",
    "src/keep.ts": "keep\n",
  })
  await writeFile(`${cwd}/.env`, "SECRET=1\n")
  await Bun.write(`${cwd}/cache/old.bin`, "old\n")
  return cwd
}

async function worker(args: Record<string, unknown>) {
  const before = world.model.toolResults().length
  const result = await mcp.call("worker", args)
  if (result.isError) throw new Error(`the worker call was refused: ${textOf(result)}`)
  const outputs = world.model
    .toolResults()
    .slice(before)
    .map((r) => r.output)
  return { out: structuredOf(result), outputs }
}

const untouched = async (cwd: string) => {
  expect(await readFile(`${cwd}/README.md`, "utf8")).toBe("# fixture\n")
  expect(await readFile(`${cwd}/.env`, "utf8")).toBe("SECRET=1\n")
}

describe("a scoped worker writing through a link in its scope to a file outside it", () => {
  test("attack: the write tool is refused by the kernel for the tracked and the ignored file", async () => {
    const cwd = await repo()
    const { out, outputs } = await worker({ cwd, task: "[script:via_write] edit", scope: SCOPE })
    expect(outputs[0]).toContain("linked")
    for (const name of ["src/readme", "src/env"])
      expect(String(out.report)).toContain(`Could not write ${cwd}/${name}: it is read-only for this worker`)
    await untouched(cwd)
  }, 120_000)

  test("attack: the edit tool is refused by the kernel for both", async () => {
    const cwd = await repo()
    const { out } = await worker({ cwd, task: "[script:via_edit] edit", scope: SCOPE })
    for (const name of ["src/readme", "src/env"])
      expect(String(out.report)).toContain(`Could not write ${cwd}/${name}: it is read-only for this worker`)
    await untouched(cwd)
  }, 120_000)

  test("attack: the shell is refused by the kernel for both", async () => {
    const cwd = await repo()
    const { outputs } = await worker({ cwd, task: "[script:via_shell] edit", scope: SCOPE })
    expect(outputs[1]).toContain("Read-only file system")
    expect(outputs[1]).not.toContain("readme=0")
    expect(outputs[2]).toContain("Read-only file system")
    expect(outputs[2]).not.toContain("env=0")
    await untouched(cwd)
  }, 120_000)

  for (const script of ["via_write", "via_edit", "via_shell"])
    test(`control: without scope the same ${script.slice(4)} steps land on both files`, async () => {
      const cwd = await repo()
      await worker({ cwd, task: `[script:${script}] edit` })
      expect(await readFile(`${cwd}/README.md`, "utf8")).toContain("pwned")
      expect(await readFile(`${cwd}/.env`, "utf8")).toBe("SECRET=pwned\n")
    }, 120_000)
})

describe("out-of-scope changes that land anyway", () => {
  /** Runs the held turn; once it has started, `during` changes the workspace from the host. */
  async function held(cwd: string, during: () => Promise<void>) {
    const before = world.model.toolResults().length
    const call = mcp.call("worker", { cwd, task: "[script:bypassed] edit", scope: SCOPE })
    const started = await until(() => world.model.toolResults().length > before, 60_000)
    expect(started).toBe(true)
    await during()
    return structuredOf(await call)
  }

  const bypass = async (cwd: string) => {
    await writeFile(`${cwd}/README.md`, "pwned\n")
    await writeFile(`${cwd}/.env`, "SECRET=pwned\n")
    await rm(`${cwd}/cache/old.bin`)
  }

  test("attack: a tracked file, an ignored file and an ignored file removed are each named", async () => {
    const cwd = await repo()
    const out = await held(cwd, () => bypass(cwd))
    expect(out.status).toBe("needs_review")
    expect(out.out_of_scope).toEqual([".env", "README.md", "cache/"])
    expect(String(out.next)).toContain("outside its scope")
    // Control: git's status, what files_changed is, names the tracked file and never the ignored ones.
    const changed = (out.files_changed as { path: string }[]).map((file) => file.path)
    expect(changed).toContain("README.md")
    expect(changed).not.toContain(".env")
    expect(changed).not.toContain("cache/old.bin")
    expect(changed).toContain("src/tally.ts")
  }, 120_000)

  test("control: the same changes made before the task started are not the task's", async () => {
    const cwd = await repo()
    await bypass(cwd)
    const out = await held(cwd, async () => {})
    expect(out.status).toBe("succeeded")
    expect(out.out_of_scope).toBeUndefined()
    expect(existsSync(`${cwd}/cache/old.bin`)).toBe(false)
  }, 120_000)
})
