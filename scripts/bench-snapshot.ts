// j) OpenCode's CPU for one scout delegation, on the shared server's config (OpenCode's snapshots off)
// beside the same server with OpenCode's default (snapshots on): two servers started alike but for that
// one setting, given the same scripted task in turns, in a directory neither has seen and again in the
// same directory. CPU is the server's own and its children's, read from /proc before and after each task.
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { randomBytes } from "node:crypto"
import { agentName } from "../src/agents/names"
import { createDemoRepository, DEMO_TASK } from "../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../src/model/home"
import { connect } from "../src/opencode/client"
import { SHARED_SERVER_ENV, type ServerRecord } from "../src/opencode/server"
import { spawn, type Spawned } from "../src/util/process"
import { median } from "./bench-measure"

interface Served {
  name: string
  home: IsolatedHome
  child: Spawned
  record: ServerRecord
  newDir: number[]
  sameDir: number[]
}

/** CPU seconds the process and its waited-for children have used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100
}

async function serve(name: string, modelUrl: string, path: string, config: object): Promise<Served> {
  const home = await createIsolatedHome({ modelUrl, env: { PATH: path } })
  const password = randomBytes(18).toString("base64url")
  const log = `${home.root}/serve.log`
  const child = spawn(["opencode", "serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs"], {
    cwd: home.root,
    env: {
      ...home.env,
      ...SHARED_SERVER_ENV,
      OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
      OPENCODE_SERVER_USERNAME: "opencode",
      OPENCODE_SERVER_PASSWORD: password,
    },
    logFile: log,
  })
  let url: string | undefined
  for (let waited = 0; !url && waited < 30_000; waited += 50) {
    url = (await Bun.file(log).text()).match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)?.[1]
    if (!url) await Bun.sleep(50)
  }
  if (!url) throw new Error(`${name}: opencode serve printed no address (see ${log})`)
  const record = { pid: child.pid, url, username: "opencode", password, version: "", binary: "opencode", startedAt: "" }
  return { name, home, child, record, newDir: [], sameDir: [] }
}

/** One scout task on `served` in `repo`: the server's CPU seconds for it. */
async function task(served: Served, repo: string): Promise<number> {
  const client = connect(served.record, { standIns: served.home.paths.opencodeDirsDir })
  const before = cpuSeconds(served.child.pid)
  const created = await client.session.create({ directory: repo, title: "bench" })
  if (!created.data) throw new Error(`${served.name}: session.create: ${JSON.stringify(created.error)}`)
  await client.session.prompt({
    sessionID: created.data.id,
    directory: repo,
    agent: agentName("scout"),
    parts: [{ type: "text", text: DEMO_TASK }],
  })
  // Work the task set off (a snapshot's git, the title) settles before the reading.
  await Bun.sleep(1000)
  return cpuSeconds(served.child.pid) - before
}

export async function benchSnapshot(modelUrl: string, path: string, rounds: number) {
  const shared = JSON.parse(SHARED_SERVER_ENV.OPENCODE_CONFIG_CONTENT) as { snapshot?: boolean }
  const repos = await mkdtemp(`${tmpdir()}/oc-orch-bench-snapshot-`)
  const servers: Served[] = []
  try {
    servers.push(await serve("ours (snapshots off)", modelUrl, path, shared))
    servers.push(await serve("OpenCode's default (snapshots on)", modelUrl, path, { ...shared, snapshot: true }))
    // A first task on each, not counted: the servers' own warm-up.
    for (const served of servers) await task(served, await createDemoRepository(repos))
    for (let round = 0; round < rounds; round++) {
      // Turns alternate which server goes first, so neither always runs on a machine the other just warmed.
      for (const served of round % 2 ? [...servers].reverse() : servers) {
        const repo = await createDemoRepository(repos)
        served.newDir.push(await task(served, repo))
        served.sameDir.push(await task(served, repo))
      }
    }
    console.log(`j) one scout task, OpenCode's CPU seconds (median of ${rounds}, server and its children)`)
    for (const served of servers)
      console.log(
        `  ${served.name.padEnd(36)} new directory ${median(served.newDir).toFixed(2)} s, ` +
          `seen directory ${median(served.sameDir).toFixed(2)} s`,
      )
    const [ours, before] = servers as [Served, Served]
    console.log(
      `  ours / default: new directory ${(median(ours.newDir) / median(before.newDir)).toFixed(2)}x, ` +
        `seen directory ${(median(ours.sameDir) / median(before.sameDir)).toFixed(2)}x`,
    )
  } finally {
    for (const served of servers) {
      await served.child.kill(2000)
      await served.home.dispose()
    }
    await rm(repos, { recursive: true, force: true })
  }
}
