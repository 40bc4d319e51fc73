// The first OpenCode start after `install` needs no network: OpenCode 1.18.33 runs
// `npm install @opencode-ai/plugin` in the config dir holding our plugin and waits for it before it
// loads the plugin. Here npm's registry is a recording endpoint on 127.0.0.1 that answers 404 to every
// request. Attack on the guarantee: a fresh install, then the real shared OpenCode server loads our
// plugin (its sandbox tools are listed) with no request reaching the registry. Control: the same
// install with the provisioned files taken away, and OpenCode asks the registry for the package.
// A config dir OpenCode already set up keeps its own files.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs"
import { authHeader, ensureServer, stopServer } from "../../src/opencode/server"
import { PLUGIN_PACKAGE, pluginDependencyFiles, shouldProvision } from "../../src/install/plugin-deps"
import { uninstall } from "../../src/install/uninstall"
import { run, spawn } from "../../src/util/process"
import { until } from "../helpers/until"
import { runDoctor } from "../../src/doctor/run"
import { doctorDepsFor, installDepsFor, installYes, machine, ROOT, type Machine } from "./helpers"

let asked: string[] = []
let registry: ReturnType<typeof Bun.serve>

/** A registry on 127.0.0.1 that answers 404 to every request and hands each one's path to `record`. */
const recordingRegistry = (record: (path: string) => void) =>
  Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      record(new URL(request.url).pathname)
      return new Response("{}", { status: 404 })
    },
  })

beforeAll(() => {
  registry = recordingRegistry((path) => asked.push(path))
})

afterAll(() => registry?.stop(true))

/**
 * A machine whose OpenCode config dir is as a new user's (no node_modules, no lockfile), its npm
 * registry the recording one, for the install's own OpenCode runs too.
 */
function fresh(): Machine {
  const m = machine()
  m.env.npm_config_registry = `http://127.0.0.1:${registry.port}/`
  rmSync(`${m.paths.opencodeConfigDir}/node_modules`, { recursive: true, force: true })
  rmSync(`${m.paths.opencodeConfigDir}/package-lock.json`, { force: true })
  return m
}

/** Starts the shared server on the installed files and lists the tools a workspace sees. */
async function toolsAfterStart(m: Machine, signal?: AbortSignal): Promise<string[]> {
  const record = await ensureServer({ paths: m.paths, binary: m.opencode, env: m.env, startTimeoutMs: 60_000 })
  try {
    const dir = `${m.dir}/workspace`
    mkdirSync(dir, { recursive: true })
    const url = `${record.url}/experimental/tool/ids?directory=${encodeURIComponent(dir)}`
    const response = await fetch(url, { headers: { authorization: authHeader(record) }, signal })
    return (await response.json()) as string[]
  } finally {
    await stopServer(m.paths)
  }
}

/** What is at each place we would write: its type and mode, and a plain file's text. */
function snapshot(m: Machine): string[] {
  return pluginDependencyFiles(m.paths.opencodeConfigDir).map((file) => {
    try {
      const found = lstatSync(file.path)
      return `${found.mode}:${found.isFile() ? readFileSync(file.path, "utf8") : ""}`
    } catch {
      return "absent"
    }
  })
}

const asksFor = (paths: string[]) => paths.some((path) => decodeURIComponent(path).includes(PLUGIN_PACKAGE.name))

/**
 * Whether an OpenCode start asks a registry of its own for the plugin package: `opencode models` (which
 * loads plugins) runs until the first such request (about 60 s in, on 1.18.33), then is stopped rather
 * than waited through its retries. Its own registry lets two of these run at once.
 */
async function asksRegistry(m: Machine): Promise<boolean> {
  const seen: string[] = []
  const own = recordingRegistry((path) => seen.push(path))
  const models = spawn([m.opencode, "models"], { env: { ...m.env, npm_config_registry: `${own.url}` } })
  let ended = false
  void models.exited.then(() => (ended = true))
  try {
    await until(() => asksFor(seen) || ended, 100_000)
    return asksFor(seen)
  } finally {
    await models.kill(500)
    own.stop(true)
  }
}

describe("OpenCode's plugin dependency, provisioned by install", () => {
  test("a fresh install: OpenCode loads our plugin and asks the registry for nothing", async () => {
    using m = fresh()
    asked = []
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

  test("~/.opencode (where OpenCode's own installer puts its binary) is provisioned too; none asked", async () => {
    using m = fresh()
    mkdirSync(`${m.home}/.opencode/bin`, { recursive: true })
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    for (const file of pluginDependencyFiles(`${m.home}/.opencode`))
      expect(readFileSync(file.path, "utf8")).toBe(file.text)
    asked = []
    expect(await toolsAfterStart(m)).toContain("sandbox_run_ro")
    expect(asked).toEqual([])
  }, 180_000)

  // Both controls at once (about 60 s each before OpenCode's first request).
  test("controls: without the provisioned files, in either dir, OpenCode asks the registry for the package", async () => {
    using xdg = fresh()
    using dotted = fresh()
    mkdirSync(`${dotted.home}/.opencode/bin`, { recursive: true })
    for (const m of [xdg, dotted]) expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    const unprovision = (dir: string) => {
      for (const file of pluginDependencyFiles(dir)) rmSync(file.path, { force: true })
      rmSync(`${dir}/node_modules`, { recursive: true, force: true })
    }
    unprovision(xdg.paths.opencodeConfigDir)
    // ~/.opencode left without them though the XDG dir keeps ours.
    unprovision(`${dotted.home}/.opencode`)
    expect(await Promise.all([asksRegistry(xdg), asksRegistry(dotted)])).toEqual([true, true])
  }, 150_000)

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

  test("a kill before the manifest left two of the files: the next install completes and owns them", async () => {
    using m = fresh()
    const [pkg, lock] = pluginDependencyFiles(m.paths.opencodeConfigDir)
    writeFileSync(pkg!.path, pkg!.text)
    writeFileSync(lock!.path, lock!.text)
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    for (const file of pluginDependencyFiles(m.paths.opencodeConfigDir))
      expect(readFileSync(file.path, "utf8")).toBe(file.text)
    expect(await uninstall(installDepsFor(m), {})).toBe(0)
    expect(existsSync(pkg!.path)).toBe(false)
  }, 120_000)

  test("node_modules swapped for a symlink after an install: the next install writes nothing through it", async () => {
    using m = fresh()
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    const outside = `${m.dir}/outside`
    mkdirSync(outside)
    rmSync(`${m.paths.opencodeConfigDir}/node_modules`, { recursive: true, force: true })
    symlinkSync(outside, `${m.paths.opencodeConfigDir}/node_modules`)
    expect(await shouldProvision(m.paths.opencodeConfigDir, undefined)).toBe(false)
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    expect(readdirSync(outside)).toEqual([])
  }, 120_000)

  // What an agent or another program may have put in the places we would write: a symlink to a
  // directory outside, a dangling symlink, a file that is not JSON (a FIFO is below). None is written
  // through or replaced; the install goes on without provisioning. (OpenCode's own
  // npm step, run by install's model discovery, deletes a symlinked node_modules itself: observed in
  // 1.18.33, so that case checks our decision and that nothing lands outside.)
  const hostile: Array<[string, (m: Machine, outside: string) => unknown]> = [
    [
      "node_modules a symlink to a directory outside",
      (m, o) => symlinkSync(o, `${m.paths.opencodeConfigDir}/node_modules`),
    ],
    [
      "package.json a dangling symlink",
      (m, o) => symlinkSync(`${o}/made.json`, `${m.paths.opencodeConfigDir}/package.json`),
    ],
    ["package-lock.json not JSON", (m) => writeFileSync(`${m.paths.opencodeConfigDir}/package-lock.json`, "{garbage")],
  ]
  for (const [what, plant] of hostile)
    test(`${what}: never written through, install goes on`, async () => {
      using m = fresh()
      const outside = `${m.dir}/outside`
      mkdirSync(outside)
      await plant(m, outside)
      expect(await shouldProvision(m.paths.opencodeConfigDir, undefined)).toBe(false)
      const before = snapshot(m)
      expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
      expect(readdirSync(outside)).toEqual([])
      if (!what.startsWith("node_modules")) expect(snapshot(m)).toEqual(before)
    }, 120_000)

  // A FIFO where OpenCode reads package.json or package-lock.json makes every OpenCode start wait on it
  // forever (its npm step opens both), so install would hang in model discovery and serve never start.
  // Install refuses before running OpenCode, names the place and changes nothing; doctor says the same.
  const fifos: Array<[string, (m: Machine) => string]> = [
    ["package-lock.json a FIFO", (m) => `${m.paths.opencodeConfigDir}/package-lock.json`],
    ["package.json a symlink to a FIFO", (m) => `${m.paths.opencodeConfigDir}/package.json`],
  ]
  for (const [what, place] of fifos)
    test(`${what}: install refuses at once, naming it, and changes nothing; doctor names it and asks OpenCode nothing`, async () => {
      using m = fresh()
      const path = place(m)
      if (what.includes("symlink")) {
        await run(["mkfifo", `${m.dir}/pipe`])
        symlinkSync(`${m.dir}/pipe`, path)
      } else await run(["mkfifo", path])
      const before = snapshot(m)
      // A FIFO read by npm blocks forever: the refusal arriving at all is the answer (the test's deadline guards).
      const refused = await installYes(m, { integrations: "codex" }).catch((error: Error & { kind?: string }) => error)
      expect(refused).toBeInstanceOf(Error)
      expect((refused as Error).message).toContain(`${path} is a FIFO`)
      expect(snapshot(m)).toEqual(before)
      expect(existsSync(m.paths.configFile)).toBe(false)
      m.write(m.paths.configFile, JSON.stringify({ version: 1, models: { scout: "local/m" } }))
      const report = await runDoctor(doctorDepsFor(m), { sandboxProbes: false, live: false })
      const check = report.checks.find((result) => result.id === "opencode-config")
      expect(check).toMatchObject({ status: "fail", fix: `Remove it (rm '${path}').` })
      expect(check?.detail).toContain(`${path} is a FIFO`)
      // Not asked, rather than waited on.
      expect(report.checks.find((result) => result.id === "models")?.status).toBe("skip")
    }, 60_000)

  // Control: the hang is real. The shared server starts, but a workspace's first request, which waits
  // on OpenCode's plugin loading, gets no answer. (`opencode models` alone sometimes answers first.)
  test("control: with a FIFO for package-lock.json, a workspace's tool list has no answer after 20 s", async () => {
    using m = fresh()
    expect((await installYes(m, { integrations: "codex" })).code).toBe(0)
    rmSync(`${m.paths.opencodeConfigDir}/package-lock.json`)
    await run(["mkfifo", `${m.paths.opencodeConfigDir}/package-lock.json`])
    const answer = await toolsAfterStart(m, AbortSignal.timeout(20_000)).then(
      (tools) => tools.length,
      (error: Error) => error.name,
    )
    expect(answer).toBe("TimeoutError")
  }, 90_000)

  test("the provisioned version is the pinned OpenCode's", () => {
    const pkg = JSON.parse(readFileSync(`${ROOT}/package.json`, "utf8")) as { devDependencies: Record<string, string> }
    expect(pkg.devDependencies["opencode-ai"]).toBe(PLUGIN_PACKAGE.version)
  })
})
