// Attacks on the host-side file tools and the shared server through the real OpenCode on the scripted
// model: a worker swapping a directory with a symlink (renameat2 RENAME_EXCHANGE) while reads and
// writes arrive, the server's password from every sandbox profile, a FIFO, a 1 MB output line. Each
// beside a control that shows the attack is real on this machine.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { existsSync, lstatSync, readFileSync } from "node:fs"
import { mkdir, writeFile } from "node:fs/promises"
import { refuseCall } from "../../plugin/guards"
import { runnerAgentName } from "../../src/agents/names"
import { readServerRecord } from "../../src/opencode/server"
import { hostContext, hostFs } from "../../src/sandbox"
import { spawn } from "../../src/util/process"
import { makeRepo, runAgent, startWorld, stopWorld, type World } from "./_world"
import { readFlags } from "../../src/config/flags"
import { arrives } from "../helpers/finishes"
import { SCOUT, WORKER, done } from "../helpers/steps"

const SECRET = "PRIVATE-KEY-MATERIAL-race-91c2"

/** Exchanges two paths as fast as it can for `seconds` (one atomic renameat2 each time). */
const swapper = (a: string, b: string, seconds: number) =>
  `python3 -c 'import ctypes,time
l=ctypes.CDLL(None,use_errno=True);e=time.time()+${seconds}
while time.time()<e: l.renameat2(-100,b"${a}",-100,b"${b}",2)'`

let world: World
let home: string
const ROUNDS = 2
const CALLS = 16
/** Turns of the race at most, until its reads have met both the directory and the swapped link. */
const RACE_TURNS = 4

beforeAll(async () => {
  world = await startWorld({})
  home = world.home.root
  await mkdir(`${home}/.ssh`, { recursive: true })
  await writeFile(`${home}/.ssh/id_rsa`, `${SECRET}\n`)
  await mkdir(`${home}/.config/opencode/plugins`, { recursive: true })
}, 120_000)
afterAll(() => stopWorld(world))

describe("rename-exchange race against the file tools", () => {
  test("control: a check-then-use reader on the host loses the race within seconds", async () => {
    const repo = await makeRepo(world)
    await mkdir(`${repo}/d`)
    await writeFile(`${repo}/d/id_rsa`, "decoy\n")
    const { run } = await import("../../src/util/process")
    await run(["ln", "-s", `${home}/.ssh`, `${repo}/dlink`])
    const swap = spawn(["bash", "-c", swapper("d", "dlink", 8)], { cwd: repo })
    let leaked = 0
    const host = hostContext(readFlags({ HOME: home, PATH: "/usr/bin:/bin" }))
    const deadline = Date.now() + 8000
    try {
      while (!leaked && Date.now() < deadline) {
        // The old design: the guard checks the path, then the host opens it by name.
        if (refuseCall({ tool: "read", args: { filePath: `${repo}/d/id_rsa` }, workspace: repo, host }, hostFs))
          continue
        try {
          if (readFileSync(`${repo}/d/id_rsa`, "utf8").includes(SECRET)) leaked++
        } catch {}
        await Promise.resolve()
      }
    } finally {
      await swap.kill(500)
    }
    expect(leaked).toBeGreaterThan(0)
  }, 30_000)

  test(`${ROUNDS} rounds of ${CALLS} reads and ${CALLS} writes during the swap: no secret read, nothing written outside`, async () => {
    const repo = await makeRepo(world)
    await mkdir(`${repo}/d`)
    await writeFile(`${repo}/d/id_rsa`, "decoy\n")
    await mkdir(`${repo}/w`)
    // Each call differs (limit), or OpenCode would see a loop of identical calls.
    const reads = Array.from({ length: CALLS }, (_, i) => ({
      tool: "read",
      args: { filePath: `${repo}/d/id_rsa`, limit: 10 + i },
    }))
    const writes = Array.from({ length: CALLS }, (_, i) => ({
      tool: "write",
      args: { filePath: `${repo}/w/evil${i}.js`, content: "console.log('pwned')\n" },
    }))
    const plant = `ln -sfn ${home}/.ssh dlink && ln -sfn ${home}/.config/opencode/plugins wlink && echo links`
    const race = `(${swapper("d", "dlink", 6)}) & (${swapper("w", "wlink", 6)}); wait; echo swapped`
    world.model.setScript("race", {
      turns: [
        {
          steps: [
            { tool: "sandbox_shell", args: { command: plant } },
            ...Array.from({ length: ROUNDS }, () => ({
              tools: [{ tool: "sandbox_shell", args: { command: race } }, ...reads, ...writes],
            })),
            done,
          ],
        },
      ],
    })
    // Both states must be met for the race to have been run: some reads find the decoy (the real
    // directory), some meet the swapped link. On a loaded machine the swapping shell can start after the
    // reads are done, so the turn is run again (up to RACE_TURNS) until both were met; every turn's calls
    // are held to the same guarantees.
    const outputs: string[] = []
    const met = () => outputs.some((o) => o.includes("decoy")) && outputs.some((o) => !o.includes("decoy"))
    for (let turns = 0; turns < RACE_TURNS && !met(); turns++) {
      const { results, turn } = await runAgent(world, WORKER, repo, "race")
      expect(turn.outcome.kind).toBe("idle")
      const fileCalls = results.filter((r) => r.tool === "read" || r.tool === "write")
      expect(fileCalls.length).toBe(ROUNDS * CALLS * 2)
      for (const result of results) expect(result.output).not.toContain(SECRET)
      outputs.push(...results.filter((r) => r.tool === "read").map((r) => r.output))
    }
    expect(met()).toBe(true)
    expect(readFileSync(`${home}/.ssh/id_rsa`, "utf8")).toBe(`${SECRET}\n`)
    for (let i = 0; i < CALLS; i++) expect(existsSync(`${home}/.config/opencode/plugins/evil${i}.js`)).toBe(false)
  }, 300_000)
})

describe("the shared server's password", () => {
  test("is unreachable from every sandbox profile, and the API refuses a call without it", async () => {
    await world.runtime.opencode() // the server starts on first use; run alone, this test starts it
    const record = (await readServerRecord(world.home.paths))!
    const port = new URL(record.url).port
    // Control: the password is on the host, and with it the API answers.
    expect(readFileSync(world.home.paths.serverFile, "utf8")).toContain(record.password)
    const auth = `Basic ${Buffer.from(`${record.username}:${record.password}`).toString("base64")}`
    expect((await fetch(`${record.url}/session`, { headers: { authorization: auth } })).status).toBe(200)
    expect((await fetch(`${record.url}/session`)).status).toBe(401)

    const probe = [
      `cat ${world.home.paths.serverFile} 2>&1 | head -c 300`,
      "cat /proc/*/environ 2>/dev/null | tr '\\0' '\\n' | grep -i -e opencode -e password",
      "env",
      `ls ${world.home.paths.stateDir} 2>&1`,
      `(exec 3<>/dev/tcp/127.0.0.1/${port} && printf 'GET /session HTTP/1.0\\r\\n\\r\\n' >&3 && head -1 <&3) 2>&1`,
      "echo probed",
    ].join("; ")
    const runners = (["read_only", "writable"] as const).flatMap((access) =>
      (["disabled", "host"] as const).map((network) => ({ access, network })),
    )
    const tool = (access: string, network: string) =>
      `sandbox_run${network === "host" ? "_network" : ""}${access === "read_only" ? "_ro" : ""}`
    const outputs: string[] = []
    for (const agent of [SCOUT, WORKER]) {
      world.model.setScript("password", {
        turns: [{ steps: [{ tool: "sandbox_shell", args: { command: probe } }, done] }],
      })
      outputs.push(`${agent}: ${(await runAgent(world, agent, await makeRepo(world), "password")).results[0]!.output}`)
    }
    for (const { access, network } of runners) {
      world.model.setScript("password", {
        turns: [
          {
            steps: [
              { tool: tool(access, network), args: { command: probe, timeout_seconds: 20 } },
              { tool: "sandbox_log_read", args: { run_id: "", offset: 1, limit: 200 } },
              done,
            ],
          },
        ],
      })
      const { results } = await runAgent(world, runnerAgentName(access, network), await makeRepo(world), "password")
      outputs.push(`${runnerAgentName(access, network)}: ${results.map((r) => r.output).join("\n")}`)
    }
    expect(outputs.length).toBe(6)
    // Each output whole in the failure message, so a miss shows which profile and what it printed.
    const missed = outputs.filter((output) => !output.includes("probed") || output.includes(record.password))
    expect(missed).toEqual([])
    // Host network reaches the port, and gets 401 without the password.
    // (The status line itself: a bare "401" can appear in any path or number a probe prints.)
    const refused = outputs.filter((o) => /HTTP\/1\.[01] 401\b/.test(o))
    expect(refused.map((o) => o.split(":")[0])).toEqual([
      runnerAgentName("read_only", "host"),
      runnerAgentName("writable", "host"),
    ])
  }, 120_000)
})

describe("special files and huge lines", () => {
  test("a FIFO (directly or through a symlink) is refused at once, not read", async () => {
    const repo = await makeRepo(world)
    world.model.setScript("fifo", {
      turns: [
        {
          steps: [
            { tool: "sandbox_shell", args: { command: "mkfifo pipe && ln -s pipe link && echo made" } },
            { tool: "read", args: { filePath: "pipe" } },
            { tool: "read", args: { filePath: "link" } },
            { tool: "grep", args: { pattern: "x", path: "pipe" } },
            done,
          ],
        },
      ],
    })
    // A read that opened the FIFO would block the session for good: the answers arriving is the answer.
    const { results } = await runAgent(world, WORKER, repo, "fifo")
    expect(lstatSync(`${repo}/pipe`).isFIFO()).toBe(true) // control: a host-side open of it would block
    expect(results[1]!.output).toContain("is not a regular file")
    expect(results[2]!.output).toContain("is not a regular file")
    expect(results[3]!.output).toContain("is not a regular file or a directory")
  }, 120_000)

  test("a 1 MB single-line runner output digests without stalling the shared server", async () => {
    const repo = await makeRepo(world)
    const line =
      "python3 -c \"import sys; sys.stdout.write(' ' * 300000 + 'at ' * 100000 + ':' * 200000 + '(' * 200000 + '\\n'); print('(fail) math > adds'); sys.exit(3)\""
    world.model.setScript("long_line", {
      turns: [{ steps: [{ tool: "sandbox_run_ro", args: { command: line, timeout_seconds: 60 } }, done] }],
    })
    world.model.setScript("quick", { turns: [{ steps: [{ text: "quick answer" }] }] })
    const slow = runAgent(world, runnerAgentName("read_only", "disabled"), repo, "long_line")
    // Another session on the same server answers meanwhile: the digest does not block its event loop (a
    // backtracking pattern held it for 12 s on 24 KB, for good on a megabyte; the deadline only ends the wait).
    const other = await arrives(runAgent(world, SCOUT, await makeRepo(world), "quick"), 60_000)
    const { results } = await slow
    expect(results[0]!.output).toContain("exit code: 3")
    expect(results[0]!.output).toContain("math > adds")
    expect(other.arrived).toBe(true)
  }, 120_000)
})
