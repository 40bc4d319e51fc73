// The plugin's tools on the real OpenCode with the scripted model: each agent reaches its own sandbox
// tool and no other, the sandbox holds (scout cannot write, worker cannot touch .git), the guards
// refuse edits to Git metadata and outside the workspace, other agents are untouched, and the runner
// returns a digest with its log on disk.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { existsSync, symlinkSync } from "node:fs"
import { runnerAgentName } from "../../src/agents/names"
import { makeRepo, runAgent, startWorld, stopWorld, type World } from "./_world"
import { run } from "../../src/util/process"
import { tempDir } from "../helpers/temp"
import { SCOUT, WORKER, shell } from "../helpers/steps"

/** A sleep length no other process uses, so looking for survivors finds only this test's. */
const MARKER = `30.${process.pid}`

const OUTSIDE = `/tmp/oc-orch-plugin-outside-${process.pid}.txt`

const write = (filePath: string) => ({ tool: "write", args: { filePath, content: "#!/bin/sh\n" } })
const done = { text: "done: {{toolOutputs}}" }

let world: World
beforeAll(async () => {
  world = await startWorld({
    scout_write: { turns: [{ steps: [shell("echo hi > scout.txt; echo exit=$?"), shell("cat README.md"), done] }] },
    worker_write: {
      turns: [
        {
          steps: [
            shell("echo hi > worker.txt && cat worker.txt"),
            shell("echo x >> .git/config; touch .git/hooks/pre-commit; echo status=$?"),
            done,
          ],
        },
      ],
    },
    worker_edit_refused: {
      turns: [
        {
          steps: [
            write(".git/hooks/post-checkout"),
            write(OUTSIDE),
            write("link/escaped.txt"),
            write("gitlink/hooks/pre-commit"),
            write("wt/.git"),
            done,
          ],
        },
      ],
    },
    worker_edit_inside: {
      turns: [{ steps: [{ tool: "write", args: { filePath: "src/new.ts", content: "export const x = 1\n" } }, done] }],
    },
    build_shell: {
      turns: [
        {
          steps: [
            shell("echo from-build"),
            { tool: "sandbox_run_network", args: { command: "echo from-build", timeout_seconds: 5 } },
            { tool: "sandbox_log_read", args: { run_id: "", offset: 1, limit: 5 } },
            { tool: "write", args: { filePath: "build.txt", content: "ok\n" } },
            done,
          ],
        },
      ],
    },
    runner_wrong: {
      turns: [{ steps: [{ tool: "sandbox_run", args: { command: "touch x", timeout_seconds: 10 } }, done] }],
    },
    runner_digest: {
      turns: [
        {
          steps: [
            {
              tool: "sandbox_run_ro",
              args: {
                command:
                  "for i in $(seq 1 2000); do echo noise $i; done; echo '(fail) math > adds [0.2ms]'; echo ' 1 fail'; exit 3",
                timeout_seconds: 30,
              },
            },
            { tool: "sandbox_log_grep", args: { run_id: "", pattern: "noise 1999" } },
            { tool: "sandbox_log_read", args: { run_id: "", offset: 2001, limit: 5 } },
            done,
          ],
        },
      ],
    },
    runner_timeout: {
      turns: [
        {
          steps: [
            { tool: "sandbox_run_ro", args: { command: `(sleep ${MARKER} &) ; sleep ${MARKER}`, timeout_seconds: 1 } },
            done,
          ],
        },
      ],
    },
  })
}, 120_000)
afterAll(() => stopWorld(world))

test("scout's sandbox_shell reads the workspace but cannot write it", async () => {
  const repo = await makeRepo(world)
  const { results } = await runAgent(world, SCOUT, repo, "scout_write")
  expect(results.map((r) => r.tool)).toEqual(["sandbox_shell", "sandbox_shell"])
  expect(results[0]!.output).toMatch(/Read-only file system/)
  expect(results[0]!.output).toContain("exit=1")
  expect(results[1]!.output).toContain("# fixture")
  expect(existsSync(`${repo}/scout.txt`)).toBe(false)
})

test("worker's sandbox_shell writes the workspace but not .git", async () => {
  const repo = await makeRepo(world)
  const config = await Bun.file(`${repo}/.git/config`).text()
  const { results } = await runAgent(world, WORKER, repo, "worker_write")
  expect(results[0]!.output).toContain("hi\n")
  expect(await Bun.file(`${repo}/worker.txt`).text()).toBe("hi\n")
  expect(results[1]!.output).toMatch(/Read-only file system/)
  expect(results[1]!.output).not.toContain("status=0")
  expect(await Bun.file(`${repo}/.git/config`).text()).toBe(config)
  expect(existsSync(`${repo}/.git/hooks/pre-commit`)).toBe(false)
})

test("the guard refuses a worker's writes into Git metadata or out of the workspace, symlinks resolved", async () => {
  const repo = await makeRepo(world)
  await using outside = await tempDir("oc-orch-outside-")
  // Lexically inside the workspace, so permission patterns pass them; only the resolved path tells.
  symlinkSync(outside.path, `${repo}/link`)
  symlinkSync(".git", `${repo}/gitlink`)
  const { results } = await runAgent(world, WORKER, repo, "worker_edit_refused")
  expect(results.map((r) => r.output)).toEqual([
    "write .git/hooks/post-checkout: Git metadata is read-only for orchestrator agents.",
    `write ${OUTSIDE}: the path is outside the workspace ${repo}.`,
    `write link/escaped.txt: the path is outside the workspace ${repo}.`,
    `write gitlink/hooks/pre-commit: the path is Git metadata (${repo}/.git); it is read-only.`,
    "write wt/.git: Git metadata is read-only for orchestrator agents.",
  ])
  expect(existsSync(`${repo}/.git/hooks/post-checkout`)).toBe(false)
  expect(existsSync(`${repo}/.git/hooks/pre-commit`)).toBe(false)
  expect(existsSync(OUTSIDE)).toBe(false)
  expect(existsSync(`${outside.path}/escaped.txt`)).toBe(false)
  await runAgent(world, WORKER, repo, "worker_edit_inside")
  expect(await Bun.file(`${repo}/src/new.ts`).text()).toBe("export const x = 1\n")
})

test("another agent cannot use the sandbox tools, nor the shared server's file tools", async () => {
  const repo = await makeRepo(world)
  const { results } = await runAgent(world, "build", repo, "build_shell")
  expect(results[0]!.output).toMatch(/only for the orchestrator's scout and worker agents, not "build"/)
  expect(results[0]!.output).not.toContain("from-build")
  expect(results[1]!.output).toMatch(
    /sandbox_run_network is only for the agent opencode-orchestrator-runner-writable-network, not "build"/,
  )
  expect(results[2]!.output).toMatch(/Runner logs are only for the orchestrator's runner agents, not "build"/)
  // The shared server's read/write/edit are ours (sandboxed), and serve the orchestrator's agents only.
  expect(results[3]!.output).toMatch(/file tools serve the orchestrator's agents only, not "build"/)
  expect(existsSync(`${repo}/build.txt`)).toBe(false)
})

test("a runner agent cannot use another runner mode's tool", async () => {
  const repo = await makeRepo(world)
  const { results } = await runAgent(world, runnerAgentName("read_only", "disabled"), repo, "runner_wrong")
  expect(results[0]!.output).toMatch(
    /only for the agent opencode-orchestrator-runner-writable|denied|not available|invalid/i,
  )
  expect(existsSync(`${repo}/x`)).toBe(false)
})

test("the runner gets a digest, and reads and searches its own log", async () => {
  const repo = await makeRepo(world)
  const { results } = await runAgent(world, runnerAgentName("read_only", "disabled"), repo, "runner_digest")
  const digest = results[0]!.output
  expect(digest).toContain("exit code: 3 (failed)")
  expect(digest).toContain("L2001: math > adds")
  expect(digest).toMatch(/run_id: run-/)
  expect(digest.length).toBeLessThan(2100)
  const log = /log: (\S+),/.exec(digest)![1]!
  expect(log.startsWith(world.home.paths.runsDir)).toBe(true)
  expect((await Bun.file(log).text()).split("\n").length).toBeGreaterThan(2000)
  expect(results[1]!.output).toContain("1999: noise 1999")
  expect(results[2]!.output).toContain("2001: (fail) math > adds")
})

test("a runner command past its timeout is killed with its background children", async () => {
  const repo = await makeRepo(world)
  // The command would sleep MARKER seconds: an answer that says "timed out after 1s" came from the kill.
  const { results } = await runAgent(world, runnerAgentName("read_only", "disabled"), repo, "runner_timeout")
  expect(results[0]!.output).toMatch(/timed out after 1s/)
  // The pid namespace is torn down as bwrap dies; give the kernel a moment, then nothing may remain.
  const survivors = async () => (await run(["pgrep", "-f", `sleep ${MARKER}`])).stdout.trim()
  const deadline = Date.now() + 3000
  while ((await survivors()) && Date.now() < deadline) await Bun.sleep(100)
  expect(await survivors()).toBe("")
})
