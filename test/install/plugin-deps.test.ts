// The first OpenCode start after `install` needs no network: OpenCode 1.18.33 runs
// `npm install @opencode-ai/plugin` in the config dir holding our plugin and waits for it before it
// loads the plugin. Here npm's registry is a recording endpoint on 127.0.0.1 that answers 404 to every
// request. Attack on the guarantee: a fresh install, then the real shared OpenCode server loads our
// plugin (its sandbox tools are listed) with no request reaching the registry. Control: the same
// install with the provisioned files taken away, and OpenCode asks the registry for the package.
// A config dir OpenCode already set up keeps its own files.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { authHeader, ensureServer, stopServer } from "../../src/opencode/server"
import { PLUGIN_PACKAGE, pluginDependencyFiles } from "../../src/install/plugin-deps"
import { uninstall } from "../../src/install/uninstall"
import { installDepsFor, installYes, machine, ROOT, type Machine } from "./helpers"

let asked: string[] = []
let registry: ReturnType<typeof Bun.serve>

beforeAll(() => {
  registry = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      asked.push(new URL(request.url).pathname)
      return new Response("{}", { status: 404 })
    },
  })
})

afterAll(() => registry?.stop(true))

/** A machine whose OpenCode config dir is as a new user's: no node_modules, no lockfile. */
function fresh(): Machine {
  const m = machine()
  rmSync(`${m.paths.opencodeConfigDir}/node_modules`, { recursive: true, force: true })
  rmSync(`${m.paths.opencodeConfigDir}/package-lock.json`, { force: true })
  return m
}

/** Starts the shared server on the installed files and lists the tools a workspace sees. */
async function toolsAfterStart(m: Machine): Promise<string[]> {
  asked = []
  const env = { ...m.env, npm_config_registry: `http://127.0.0.1:${registry.port}/` }
  const record = await ensureServer({ paths: m.paths, binary: m.opencode, env, startTimeoutMs: 60_000 })
  try {
    const dir = `${m.dir}/workspace`
    mkdirSync(dir, { recursive: true })
    const url = `${record.url}/experimental/tool/ids?directory=${encodeURIComponent(dir)}`
    const response = await fetch(url, { headers: { authorization: authHeader(record) } })
    return (await response.json()) as string[]
  } finally {
    await stopServer(m.paths)
  }
}

const packageAsked = () => asked.some((path) => decodeURIComponent(path).includes(PLUGIN_PACKAGE.name))

describe("OpenCode's plugin dependency, provisioned by install", () => {
  test("a fresh install: OpenCode loads our plugin and asks the registry for nothing", async () => {
    using m = fresh()
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    for (const file of pluginDependencyFiles(m.paths.opencodeConfigDir))
      expect(readFileSync(file.path, "utf8")).toBe(file.text)
    const tools = await toolsAfterStart(m)
    expect(tools).toContain("sandbox_run_ro")
    expect(asked).toEqual([])
    // OpenCode left the provisioned files as they were, so uninstall takes them (and node_modules/) away.
    expect(await uninstall(installDepsFor(m), {})).toBe(0)
    for (const file of pluginDependencyFiles(m.paths.opencodeConfigDir)) expect(existsSync(file.path)).toBe(false)
    expect(existsSync(`${m.paths.opencodeConfigDir}/node_modules`)).toBe(false)
  }, 180_000)

  test("control: without the provisioned files, OpenCode asks the registry for the package", async () => {
    using m = fresh()
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    for (const file of pluginDependencyFiles(m.paths.opencodeConfigDir)) rmSync(file.path, { force: true })
    rmSync(`${m.paths.opencodeConfigDir}/node_modules`, { recursive: true, force: true })
    await toolsAfterStart(m)
    expect(packageAsked()).toBe(true)
  }, 180_000)

  test("a config dir OpenCode already set up keeps its own package.json; nothing is reported preserved", async () => {
    using m = fresh()
    const own = `${JSON.stringify({ dependencies: { [PLUGIN_PACKAGE.name]: "1.18.0", "left-pad": "1.3.0" } })}\n`
    writeFileSync(`${m.paths.opencodeConfigDir}/package.json`, own)
    const { code, lines } = await installYes(m, { integrations: "codex" })
    expect(code).toBe(0)
    expect(readFileSync(`${m.paths.opencodeConfigDir}/package.json`, "utf8")).toBe(own)
    expect(existsSync(`${m.paths.opencodeConfigDir}/package-lock.json`)).toBe(false)
    expect(lines.join("\n")).not.toContain("preserved")
  }, 120_000)

  test("the provisioned version is the pinned OpenCode's", () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { devDependencies: Record<string, string> }
    expect(pkg.devDependencies["opencode-ai"]).toBe(PLUGIN_PACKAGE.version)
  })
})
