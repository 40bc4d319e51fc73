// OpenCode's CPU on two server setups that differ in one thing, given the same scripted scout task in turns:
//   j) the shared server's config (OpenCode's snapshots off) beside OpenCode's default (snapshots on)
//   k) the scripted home's pinned empty model catalog (src/model/home.ts) beside OpenCode's bundled
//      models.dev catalog (what it reads when no catalog file is there)
// For each: the first catalog read (`config.providers`, what a readiness check asks), a task in a directory
// the server has not seen and again in the same directory. CPU is the server's own and its children's, read
// from /proc before and after each step.
import { readFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { randomBytes } from "node:crypto"
import { agentName } from "../src/agents/names"
import type { Env } from "../src/config/flags"
import { createDemoRepository, DEMO_TASK } from "../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../src/model/home"
import { connect } from "../src/opencode/client"
import { SHARED_SERVER_ENV, type ServerRecord } from "../src/opencode/server"
import { spawn, type Spawned } from "../src/util/process"
import { median } from "./bench-measure"

/** One side of a comparison: its name, its OPENCODE_CONFIG_CONTENT, and what it changes in the home's env. */
export interface Setup {
  name: string
  config: object
  env?: (home: Env) => Env
}

interface Served {
  setup: Setup
  home: IsolatedHome
  child: Spawned
  record: ServerRecord
}

/** CPU seconds the process and its waited-for children have used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100
}

async function serve(setup: Setup, modelUrl: string, path: string): Promise<Served> {
  const home = await createIsolatedHome({ modelUrl, env: { PATH: path } })
  const password = randomBytes(18).toString("base64url")
  const log = `${home.root}/serve.log`
  const child = spawn(["opencode", "serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs"], {
    cwd: home.root,
    env: {
      ...(setup.env ? setup.env(home.env) : home.env),
      ...SHARED_SERVER_ENV,
      OPENCODE_CONFIG_CONTENT: JSON.stringify(setup.config),
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
  if (!url) throw new Error(`${setup.name}: opencode serve printed no address (see ${log})`)
  const record = { pid: child.pid, url, username: "opencode", password, version: "", binary: "opencode", startedAt: "" }
  return { setup, home, child, record }
}

/** The server's CPU seconds for its first catalog read. */
async function catalog(served: Served): Promise<number> {
  const client = connect(served.record, { standIns: served.home.paths.opencodeDirsDir })
  const before = cpuSeconds(served.child.pid)
  const providers = await client.config.providers({})
  if (!providers.data) throw new Error(`${served.setup.name}: config.providers: ${JSON.stringify(providers.error)}`)
  return cpuSeconds(served.child.pid) - before
}

/** One scout task on `served` in `repo`: the server's CPU seconds for it. */
async function task(served: Served, repo: string): Promise<number> {
  const client = connect(served.record, { standIns: served.home.paths.opencodeDirsDir })
  const before = cpuSeconds(served.child.pid)
  const created = await client.session.create({ directory: repo, title: "bench" })
  if (!created.data) throw new Error(`${served.setup.name}: session.create: ${JSON.stringify(created.error)}`)
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

/**
 * `rounds` pairs of servers, one of each setup, started fresh each round (the catalog read is a server's first);
 * each is given a first task not counted (its warm-up), then a new directory and the same one again.
 */
export async function compareServers(
  title: string,
  setups: [Setup, Setup],
  modelUrl: string,
  path: string,
  rounds: number,
) {
  const repos = await mkdtemp(`${tmpdir()}/oc-orch-bench-opencode-`)
  const results = setups.map((setup) => ({
    setup,
    catalog: [] as number[],
    newDir: [] as number[],
    sameDir: [] as number[],
  }))
  try {
    for (let round = 0; round < rounds; round++) {
      // Turns alternate which setup goes first, so neither always runs on a machine the other just warmed.
      for (const result of round % 2 ? [...results].reverse() : results) {
        const served = await serve(result.setup, modelUrl, path)
        try {
          result.catalog.push(await catalog(served))
          await task(served, await createDemoRepository(repos))
          const repo = await createDemoRepository(repos)
          result.newDir.push(await task(served, repo))
          result.sameDir.push(await task(served, repo))
        } finally {
          await served.child.kill(2000)
          await served.home.dispose()
        }
      }
    }
    console.log(`${title}, OpenCode's CPU seconds (median of ${rounds}, server and its children)`)
    for (const result of results)
      console.log(
        `  ${result.setup.name.padEnd(36)} first catalog read ${median(result.catalog).toFixed(2)} s, ` +
          `new directory ${median(result.newDir).toFixed(2)} s, seen directory ${median(result.sameDir).toFixed(2)} s`,
      )
    const [ours, other] = results as [(typeof results)[0], (typeof results)[0]]
    const ratio = (key: "catalog" | "newDir" | "sameDir") => (median(ours[key]) / median(other[key])).toFixed(2)
    console.log(
      `  ${ours.setup.name} / ${other.setup.name}: catalog ${ratio("catalog")}x, new directory ${ratio("newDir")}x, ` +
        `seen directory ${ratio("sameDir")}x`,
    )
  } finally {
    await rm(repos, { recursive: true, force: true })
  }
}

const SHARED_CONFIG = JSON.parse(SHARED_SERVER_ENV.OPENCODE_CONFIG_CONTENT) as object

/** j) the shared server's config beside OpenCode's default snapshots. */
export const benchSnapshot = (modelUrl: string, path: string, rounds: number) =>
  compareServers(
    "j) one scout task, snapshots",
    [
      { name: "ours (snapshots off)", config: SHARED_CONFIG },
      { name: "OpenCode's default (snapshots on)", config: { ...SHARED_CONFIG, snapshot: true } },
    ],
    modelUrl,
    path,
    rounds,
  )

/** k) the scripted home's empty catalog beside the bundled models.dev one. */
export const benchCatalog = (modelUrl: string, path: string, rounds: number) =>
  compareServers(
    "k) one scout task, model catalog",
    [
      { name: "scripted home (empty catalog)", config: SHARED_CONFIG },
      {
        name: "bundled models.dev catalog",
        config: SHARED_CONFIG,
        env: ({ OPENCODE_MODELS_PATH: _, ...rest }) => rest,
      },
    ],
    modelUrl,
    path,
    rounds,
  )
