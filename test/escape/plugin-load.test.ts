// Plugin code an agent plants is never imported by a host process, through the real OpenCode on the
// scripted model. OpenCode imports the plugin files of every `.opencode/` and every `opencode.json`
// `plugin` entry between an instance's directory and its project root whenever it loads that instance;
// the product never names a workspace to it, only a stand-in of ours (src/sandbox/stand-ins.ts). Tried
// at every load: a first request in a directory, a reload after the instance is released, a restarted
// server, and the race of an in-place worker toggling the files at its repository root while scouts go
// to fresh subdirectories of it. Control: the same files, with OpenCode given the directory itself
// (the defence removed), are imported at once.
import { beforeAll, describe, expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { mkdir, readdir, rm, writeFile } from "node:fs/promises"
import { createOpencodeClient } from "@opencode-ai/sdk/v2"
import { authHeader, ensureServer, readServerRecord, stopServer } from "../../src/opencode/server"
import { provideStandIn, workspaceOf, hostFs } from "../../src/sandbox"
import { SCOUT, done, read, shell } from "../helpers/steps"
import { until } from "../helpers/until"
import { battery, makeRepo, runAgent, scratch, structuredOf } from "./_world"

/** Rounds of the race: scouts into fresh subdirectories while the worker toggles the files. */
const RACE_ROUNDS = 20

const { world, mcp } = battery({
  read_readme: { turns: [{ steps: [read("README.md"), done] }] },
  // An in-place worker making the plugin files appear and disappear at its root until told to stop.
  toggle: {
    turns: [
      {
        steps: [
          shell(
            "for i in $(seq 1 4000); do [ -e stop ] && break; mkdir -p .opencode/plugins; " +
              "cp payload.js .opencode/plugins/p.js; cp payload.json opencode.json; sleep 0.01; " +
              "rm -rf .opencode opencode.json; sleep 0.01; done; echo toggled",
          ),
          done,
        ],
      },
    ],
  },
})

let MARKERS = ""
/** What was imported: one line per import, in a file only a host import of the payload writes. */
const imported = async () => readdir(MARKERS)

/** A plugin module whose import, anywhere on the host, leaves its mark. */
const payload = (markers: string) =>
  `import { appendFileSync } from "node:fs"\n` +
  `appendFileSync(${JSON.stringify(`${markers}/imported`)}, process.pid + "\\n")\n` +
  "export default async () => ({})\n"

/** A repository carrying the payload, and (planted) the plugin files that name it at its root. */
async function payloadRepo(planted: boolean): Promise<string> {
  const repo = await makeRepo(world)
  await writeFile(`${repo}/payload.js`, payload(MARKERS))
  await writeFile(`${repo}/payload.json`, JSON.stringify({ plugin: ["./payload.js"] }))
  if (planted) {
    await mkdir(`${repo}/.opencode/plugins`, { recursive: true })
    await writeFile(`${repo}/.opencode/plugins/p.js`, payload(MARKERS))
    await writeFile(`${repo}/opencode.json`, JSON.stringify({ plugin: ["./payload.js"] }))
  }
  return repo
}

/** A session with our scout in `directory`, through the product's own client (it names a stand-in). */
const productSession = async (directory: string) => (await runAgent(world, SCOUT, directory, "read_readme")).turn

/**
 * The shared server (re)started with room to start on a loaded machine; the runtime then finds it running.
 * A restart is what a recycle does: the next request in each directory loads a new instance.
 */
const serverUp = () =>
  ensureServer({ paths: world.home.paths, binary: "opencode", env: world.home.env, startTimeoutMs: 120_000 })

beforeAll(async () => {
  MARKERS = await scratch(world, "oc-orch-plugin-markers-")
  await serverUp()
}, 150_000)

describe("plugin code planted in a workspace is never imported on the host", () => {
  test("control: OpenCode given the directory itself imports the planted plugin at once", async () => {
    const repo = await payloadRepo(true)
    await mkdir(`${repo}/sub`)
    const record = (await readServerRecord(world.home.paths))!
    const raw = createOpencodeClient({ baseUrl: record.url, headers: { authorization: authHeader(record) } })
    const directory = `${repo}/sub`
    const session = await raw.session.create({ directory })
    const sessionID = session.data!.id
    // The first message loads the plugins; the turn itself does not matter here.
    await raw.session.promptAsync({
      sessionID,
      directory,
      agent: SCOUT,
      model: { providerID: "scripted", modelID: "fast" },
      parts: [{ type: "text", text: "[script:read_readme] go" }],
    })
    expect(await until(async () => (await imported()).length > 0, 90_000)).toBe(true)
    await raw.session.abort({ sessionID, directory })
    await raw.instance.dispose({ directory })
    await rm(`${MARKERS}/imported`, { force: true })
  }, 240_000)

  test("named through the product: a first load, a reload after release and a restarted server import nothing", async () => {
    const repo = await payloadRepo(true)
    await mkdir(`${repo}/sub`)
    for (const round of ["first load", "after release", "after restart"]) {
      for (const directory of [repo, `${repo}/sub`]) await productSession(directory)
      if (round === "first load") {
        const { client } = await world.runtime.opencode()
        for (const directory of [repo, `${repo}/sub`]) await client.instance.dispose({ directory })
      }
      if (round === "after release") {
        await stopServer(world.home.paths)
        await serverUp()
      }
      expect(await imported()).toEqual([])
    }
  }, 240_000)

  test(`an in-place worker toggling plugin files at its root while ${RACE_ROUNDS} scouts go to fresh subdirectories imports nothing, then after a release and a restart`, async () => {
    const repo = await payloadRepo(false)
    const worker = mcp.call("worker", { cwd: repo, task: "[script:toggle] toggle" })
    expect(await until(() => existsSync(`${repo}/.opencode`), 60_000)).toBe(true)
    const outcomes: string[] = []
    const scout = async (cwd: string) => {
      const result = await mcp.call("scout", { cwd, task: "[script:read_readme] read" })
      outcomes.push(result.isError ? "refused" : structuredOf(result).status)
    }
    for (let round = 0; round < RACE_ROUNDS; round++) {
      await mkdir(`${repo}/fresh-${round}`)
      await scout(`${repo}/fresh-${round}`)
    }
    expect(await imported()).toEqual([])
    // The release of every idle instance, then the same subdirectories loaded again while the files toggle.
    const { client } = await world.runtime.opencode()
    for (let round = 0; round < 5; round++) await client.instance.dispose({ directory: `${repo}/fresh-${round}` })
    for (let round = 0; round < 5; round++) await scout(`${repo}/fresh-${round}`)
    expect(await imported()).toEqual([])
    await writeFile(`${repo}/stop`, "")
    await worker
    // A restarted server, the files planted for good, sessions in fresh subdirectories with no admission before.
    await stopServer(world.home.paths)
    await serverUp()
    await mkdir(`${repo}/.opencode/plugins`, { recursive: true })
    await writeFile(`${repo}/.opencode/plugins/p.js`, payload(MARKERS))
    await writeFile(`${repo}/opencode.json`, JSON.stringify({ plugin: ["./payload.js"] }))
    for (const name of ["after-restart-a", "after-restart-b"]) {
      await mkdir(`${repo}/${name}`)
      await productSession(`${repo}/${name}`)
    }
    expect(await imported()).toEqual([])
    // The scouts ran (admitted while the files were away, refused while they were there): real loads.
    expect(outcomes).toContain("succeeded")
  }, 600_000)
})

describe("stand-ins", () => {
  test("a stand-in maps back to its workspace; a changed or garbage map is refused, never followed", async () => {
    const root = world.home.paths.opencodeDirsDir
    const workspace = await makeRepo(world)
    const standIn = provideStandIn(root, workspace)
    expect(provideStandIn(root, standIn)).toBe(standIn)
    expect(workspaceOf(root, standIn, hostFs)).toBe(workspace)
    // Not a stand-in: a directory is its own workspace (admission then judges it).
    expect(workspaceOf(root, workspace, hostFs)).toBe(workspace)
    // A map naming another directory does not hash back to the stand-in's name.
    await writeFile(`${standIn}.workspace`, world.home.root)
    expect(() => workspaceOf(root, standIn, hostFs)).toThrow(/stands for no workspace/)
    await writeFile(`${standIn}.workspace`, "\0garbage")
    expect(() => workspaceOf(root, standIn, hostFs)).toThrow(/stands for no workspace/)
    await rm(`${standIn}.workspace`)
    expect(() => workspaceOf(root, standIn, hostFs)).toThrow(/stands for no workspace/)
    // Provided again, the map is whole again.
    provideStandIn(root, workspace)
    expect(workspaceOf(root, standIn, hostFs)).toBe(workspace)
  })
})
