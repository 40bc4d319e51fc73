// Doctor and serve agree on readiness: the compiled binary's `doctor --json` and its `serve` (over stdio)
// run in the same world — a read-only state dir, Debian's bubblewrap 0.8.0 (GHSA-pxhw-h44j-8pfx) or an
// unexecutable bwrap mounted over /usr/bin/bwrap in a mount namespace, an unexecutable sandbox launcher,
// a typo'd model in config.json, a FIFO where OpenCode reads its package-lock.json —
// and for each, doctor fails one check and serve refuses the delegation before anything starts, with
// doctor's detail and doctor's one-line fix word for word. Control: the healthy world passes both.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import type { CallToolResult } from "@modelcontextprotocol/client"
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs"
import { createRepository } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import { stopServer } from "../../src/opencode/server"
import { run } from "../../src/util/process"
import { requireInstalled } from "../helpers/installed"
import { BINARY, connectStdio, TEST_PATH, textOf } from "../helpers/mcp"

interface Check {
  id: string
  status: "pass" | "fail" | "skip"
  detail: string
  fix?: string
}

let model: ScriptedModel
let home: IsolatedHome
let repo: string
let notExecutable: string

beforeAll(async () => {
  model = await startScriptedModel({})
  home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH } })
  mkdirSync(home.paths.stateDir, { recursive: true })
  repo = await createRepository("oc-orch-ready-", { "README.md": "# r\n" })
  // The real bwrap without its execute bits: present, but nothing can run it.
  notExecutable = `${home.root}/bwrap-not-executable`
  copyFileSync("/usr/bin/bwrap", notExecutable)
  await Bun.$`chmod 0644 ${notExecutable}`.quiet()
})
afterAll(async () => {
  if (home) await stopServer(home.paths)
  await model?.stop()
  await home?.dispose()
})

/** The command run in a mount namespace with `mounts` (bwrap arguments), or as it is without any. */
const inWorld = (mounts: string[], command: string[]) =>
  mounts.length ? ["/usr/bin/bwrap", "--dev-bind", "/", "/", ...mounts, "--die-with-parent", "--", ...command] : command

async function doctorIn(mounts: string[]): Promise<Check[]> {
  const result = await run(inWorld(mounts, [BINARY, "doctor", "--json"]), { env: home.env, timeoutMs: 120_000 })
  return (JSON.parse(result.stdout) as { checks: Check[] }).checks
}

async function scoutIn(mounts: string[]): Promise<CallToolResult> {
  const mcp = await connectStdio(home.env, inWorld(mounts, [BINARY, "serve"]))
  try {
    return (await mcp.client.callTool({
      name: "scout",
      arguments: { cwd: repo, task: "read the README" },
    })) as CallToolResult
  } finally {
    await mcp.close()
  }
}

const taskRecords = () =>
  existsSync(home.paths.tasksDir) ? readdirSync(home.paths.tasksDir).filter((name) => name.endsWith(".json")).length : 0
const READINESS = ["launcher:python3", "bwrap", "state-dir", "model:scout"]

describe("doctor and serve share one set of readiness checks", () => {
  test("control: a healthy world passes doctor's readiness checks and serve delegates", async () => {
    const checks = await doctorIn([])
    expect(checks.filter((c) => READINESS.includes(c.id)).map((c) => [c.id, c.status])).toEqual([
      ["launcher:python3", "pass"],
      ["bwrap", "pass"],
      ["state-dir", "pass"],
      ["model:scout", "pass"],
    ])
    expect(checks.filter((c) => c.id.startsWith("sandbox:")).every((c) => c.status === "pass")).toBe(true)
    const scout = await scoutIn([])
    expect(scout.isError).toBeFalsy()
    expect(textOf(scout)).toContain("status: succeeded")
  }, 180_000)

  const worlds: Array<{
    name: string
    mounts: () => string[]
    edit?: () => () => void
    id: string
    detail: RegExp
    fix: RegExp
  }> = [
    {
      name: "a read-only state dir",
      mounts: () => ["--ro-bind", home.paths.stateDir, home.paths.stateDir],
      id: "state-dir",
      detail: /cannot be written: the filesystem is read-only \(EROFS\)/,
      fix: /Make it writable \(or point XDG_STATE_HOME elsewhere\)/,
    },
    {
      name: "Debian's bubblewrap 0.8.0 at /usr/bin/bwrap",
      mounts: () => [
        "--ro-bind",
        requireInstalled("/usr/bin/bwrap.debian", "Debian's bubblewrap 0.8.0, the control"),
        "/usr/bin/bwrap",
      ],
      id: "bwrap",
      detail: /bubblewrap 0\.8\.0 is older than 0\.12\.0 and affected by GHSA-pxhw-h44j-8pfx/,
      fix: /^Install bubblewrap >= 0\.12\.0 as \/usr\/bin\/bwrap: .*github\.com\/containers\/bubblewrap\/releases/,
    },
    {
      name: "an unexecutable /usr/bin/bwrap",
      mounts: () => ["--ro-bind", notExecutable, "/usr/bin/bwrap"],
      id: "bwrap",
      detail: /^\/usr\/bin\/bwrap is not executable$/,
      fix: /^Install bubblewrap >= 0\.12\.0 as \/usr\/bin\/bwrap/,
    },
    {
      name: "an unexecutable /usr/bin/python3 (a sandbox launcher)",
      // Over the file the link resolves to: bwrap cannot mount onto a symlink.
      mounts: () => ["--ro-bind", notExecutable, realpathSync("/usr/bin/python3")],
      id: "launcher:python3",
      detail: /^\/usr\/bin\/python3 is not executable$/,
      fix: /^Install python3 at exactly \/usr\/bin\/python3/,
    },
    {
      name: "a typo'd model in config.json",
      mounts: () => [],
      edit: () => {
        const before = readFileSync(home.paths.configFile, "utf8")
        const config = JSON.parse(before)
        writeFileSync(
          home.paths.configFile,
          JSON.stringify({ ...config, models: { ...config.models, scout: `${config.models.scout}x` } }),
        )
        return () => writeFileSync(home.paths.configFile, before)
      },
      id: "model:scout",
      detail: /config\.json routes scout to ".*x", which OpenCode does not list/,
      fix: /^Set models\.scout in .*config\.json to an id `opencode models` lists, then run `opencode-mcp-orchestrator install --yes`/,
    },
    {
      name: "a FIFO where OpenCode reads package-lock.json",
      mounts: () => [],
      edit: () => {
        // Every OpenCode start would wait on it for good (test/install/plugin-deps.test.ts shows it).
        const lock = `${home.paths.opencodeConfigDir}/package-lock.json`
        const kept = existsSync(lock) ? readFileSync(lock) : undefined
        rmSync(lock, { force: true })
        Bun.spawnSync(["mkfifo", lock])
        return () => {
          rmSync(lock, { force: true })
          if (kept) writeFileSync(lock, kept)
        }
      },
      id: "opencode-config",
      detail: /package-lock\.json is a FIFO: OpenCode reads it as a file at every start and would wait on it forever/,
      fix: /^Remove it \(rm '.*package-lock\.json'\)\.$/,
    },
  ]

  for (const world of worlds)
    test(`${world.name}: doctor fails one check, serve refuses with its detail and fix`, async () => {
      const restore = world.edit?.()
      try {
        const checks = await doctorIn(world.mounts())
        const failed = checks.find((c) => c.id === world.id)
        expect(failed?.status).toBe("fail")
        expect(failed?.detail).toMatch(world.detail)
        expect(failed?.fix).toMatch(world.fix)
        expect(failed?.fix).not.toContain("scripts/")
        // One line for a bwrap that cannot be used: no probe failures and no user-namespace hint under it.
        if (world.id === "bwrap")
          expect(checks.filter((c) => c.status === "fail").map((c) => c.id)).not.toContainEqual(
            expect.stringMatching(/^sandbox/),
          )
        const records = taskRecords()
        const scout = await scoutIn(world.mounts())
        expect(scout.isError).toBe(true)
        const text = textOf(scout)
        expect(text).toContain(failed!.detail)
        expect(text).toContain(`next: ${failed!.fix}`)
        expect(taskRecords()).toBe(records)
      } finally {
        restore?.()
      }
    }, 180_000)
})
