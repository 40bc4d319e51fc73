// Through the real OpenCode on the scripted model: a plugin tool called without a required argument
// (left out, null, or of another type) is refused before it runs and nothing is written, the write
// tool above all (it used to write an empty file when `content` was missing); the same calls with
// their arguments do their work (control). And config.json is read through the zod schema: a value
// the schema refuses (an unknown key the old hand parser ignored) stops the plugin's tools, with the
// schema's message, where the valid config runs them (control).
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { mkdir } from "node:fs/promises"
import { makeRepo, runAgent, startWorld, stopWorld, type World } from "./_world"
import { scratch } from "../helpers/world"
import { SCOUT, WORKER } from "../helpers/steps"

const done = { text: "done: {{toolOutputs}}" }

let world: World
beforeAll(async () => {
  world = await startWorld({
    missing: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "left-out.txt" } },
            { tool: "write", args: { filePath: "null.txt", content: null } },
            { tool: "write", args: { filePath: "number.txt", content: 42 } },
            { tool: "write", args: { content: "where?\n" } },
            { tool: "edit", args: { filePath: "README.md", oldString: "# fixture" } },
            { tool: "grep", args: { path: "." } },
            { tool: "sandbox_shell", args: { command: null } },
            done,
          ],
        },
      ],
    },
    given: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "given.txt", content: "hello\n" } },
            { tool: "write", args: { filePath: "empty.txt", content: "" } },
            { tool: "edit", args: { filePath: "README.md", oldString: "# fixture", newString: "# edited" } },
            done,
          ],
        },
      ],
    },
    shell: { turns: [{ steps: [{ tool: "sandbox_shell", args: { command: "echo ran-in-sandbox" } }, done] }] },
  })
}, 120_000)
afterAll(() => stopWorld(world))

test("a worker's file tools called without a required argument are refused, and nothing is written", async () => {
  const repo = await makeRepo(world)
  const { results } = await runAgent(world, WORKER, repo, "missing")
  expect(results.map((r) => r.tool)).toEqual(["write", "write", "write", "write", "edit", "grep", "sandbox_shell"])
  const [leftOut, asNull, asNumber, noPath, edit, grep, shell] = results.map((r) => r.output)
  expect(leftOut).toContain('write: the "content" argument is required')
  expect(leftOut).toContain("Nothing was done; call write again")
  expect(asNull).toContain('the "content" argument is required')
  expect(asNumber).toContain('the "content" argument must be a string, got 42')
  // The guard (tool.execute.before) sees a write with no path first; either refusal will do.
  expect(noPath).toMatch(/the "filePath" argument is required|no target path found in the call/)
  expect(edit).toContain('edit: the "newString" argument is required')
  expect(grep).toContain('grep: the "pattern" argument is required')
  expect(shell).toContain('sandbox_shell: the "command" argument is required')
  for (const file of ["left-out.txt", "null.txt", "number.txt", "undefined", "where?"])
    expect(existsSync(`${repo}/${file}`)).toBe(false)
  expect(await Bun.file(`${repo}/README.md`).text()).toBe("# fixture\n")
}, 120_000)

test("control: the same tools with their arguments write, an empty content included", async () => {
  const repo = await makeRepo(world)
  const { results } = await runAgent(world, WORKER, repo, "given")
  expect(results.map((r) => r.output)).toEqual([
    "Wrote file successfully.",
    "Wrote file successfully.",
    "Edit applied successfully.",
  ])
  expect(await Bun.file(`${repo}/given.txt`).text()).toBe("hello\n")
  expect(await Bun.file(`${repo}/empty.txt`).text()).toBe("")
  expect(await Bun.file(`${repo}/README.md`).text()).toBe("# edited\n")
}, 120_000)

/** A toolchain directory a trusted root may name. */
async function toolchain(): Promise<string> {
  const dir = await scratch(world, "oc-orch-toolchain-")
  await mkdir(`${dir}/bin`)
  return dir
}

/** Runs the scout's shell script with config.json edited by `edit`, then puts the file back. */
async function shellWithConfig(edit: (config: Record<string, unknown>) => Record<string, unknown>) {
  const file = world.home.paths.configFile
  const saved = await Bun.file(file).text()
  await Bun.write(file, JSON.stringify(edit(JSON.parse(saved) as Record<string, unknown>)))
  try {
    const { results } = await runAgent(world, SCOUT, await makeRepo(world), "shell")
    return results[0]!.output
  } finally {
    await Bun.write(file, saved)
  }
}

test("config.json the schema refuses stops the plugin's tools with the schema's message", async () => {
  const root = await toolchain()
  const entry = await shellWithConfig((config) => ({
    ...config,
    sandboxRuntime: { trustedRoots: [{ root, pathEntrys: ["bin"] }] },
  }))
  expect(entry).toContain(`${world.home.paths.configFile} is invalid`)
  expect(entry).toContain('sandboxRuntime.trustedRoots.0: unknown field "pathEntrys"; did you mean "pathEntries"?')
  expect(entry).toContain(`Edit ${world.home.paths.configFile} to fix the field above (the file was not changed)`)
  expect(entry).toContain("it is not yours\nto change")
  expect(entry).not.toContain("ran-in-sandbox")
  const topLevel = await shellWithConfig((config) => ({ ...config, workspaceRoot: ["/nowhere"] }))
  expect(topLevel).toContain('unknown field "workspaceRoot"; did you mean "workspaceRoots"?')
  expect(topLevel).not.toContain("ran-in-sandbox")
}, 120_000)

test("control: the valid config, with a trusted root, runs the same tool", async () => {
  const root = await toolchain()
  const output = await shellWithConfig((config) => ({
    ...config,
    sandboxRuntime: { trustedRoots: [{ root, pathEntries: ["bin"] }] },
  }))
  expect(output).toContain("ran-in-sandbox")
  expect(output).toContain("[exit code: 0]")
}, 120_000)
