// One shared OpenCode server carries 8 delegations at once (OpenCode keeps its sessions in SQLite, and
// "database is locked" under concurrency has been reported against it): 8 scouts and 8 workers in
// 8 repositories, started together through one MCP server, all succeed with their own reports and
// edits, every progress event arrives, and the server's log has no lock error.
import { afterAll, beforeAll, expect, test } from "bun:test"
import { connect, makeRepo, startWorld, stopWorld, structured, type World } from "./_setup"

let world: World

beforeAll(async () => {
  world = await startWorld({
    look: {
      turns: [
        {
          steps: [
            { tool: "glob", args: { pattern: "src/*.ts" }, delayMs: 500 },
            { tool: "read", args: { filePath: "src/tally.ts" } },
            { text: "looked: {{userMessage}}", delayMs: 500 },
          ],
        },
      ],
    },
    edit: {
      turns: [
        {
          steps: [
            { tool: "write", args: { filePath: "src/added.ts", content: "export const added = 1\n" }, delayMs: 500 },
            { text: "edited: {{userMessage}}", delayMs: 500 },
          ],
        },
      ],
    },
  })
})

afterAll(() => stopWorld(world))

test("8 scouts, then 8 workers, at once on one shared server: all succeed, each with its own report, no database lock", async () => {
  const { client, close } = await connect(world, { syncBudgetMs: 120_000 })
  try {
    for (const role of ["scout", "worker"] as const) {
      const repos = await Promise.all(Array.from({ length: 8 }, () => makeRepo(world)))
      const script = role === "scout" ? "look" : "edit"
      const progress = repos.map(() => [] as string[])
      const results = await Promise.all(
        repos.map((cwd, i) =>
          client.callTool(
            { name: role, arguments: { cwd, task: `[script:${script}] lane ${i}` } },
            {
              timeout: 180_000,
              onprogress: (p) => progress[i]!.push(String(p.message)),
            },
          ),
        ),
      )
      results.forEach((result, i) => {
        const answer = structured(result)
        expect(answer.status).toBe("succeeded")
        expect(String(answer.report)).toContain(`lane ${i}`)
        expect(progress[i]!.some((line) => line.startsWith("step 2"))).toBe(true)
      })
      if (role === "worker")
        for (const cwd of repos) expect(await Bun.file(`${cwd}/src/added.ts`).text()).toBe("export const added = 1\n")
    }
    const log = await Bun.file(world.home.paths.serverLog).text()
    expect(log).not.toMatch(/database is locked|SQLITE_BUSY/i)
  } finally {
    await close()
  }
}, 300_000)
