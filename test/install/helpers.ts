// An isolated machine for install tests: a temporary HOME with XDG dirs, CODEX_HOME and
// CLAUDE_CONFIG_DIR inside it, an OpenCode config with an offline local provider, the real pinned
// OpenCode (node_modules/.bin/opencode) for model discovery, and the compiled binary to install.
import { cpSync, mkdtempSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { readFlags, type Env } from "../../src/config/flags"
import { resolvePaths } from "../../src/config/paths"
import { LAUNCHERS } from "../../src/sandbox"
import { runDoctor, type DoctorDeps } from "../../src/doctor/run"
import { clientHomes } from "../../src/install/homes"
import { install, type InstallDeps, type InstallOptions } from "../../src/install/install"
import { PLUGIN_DEPENDENCY_LOCK } from "../../src/model/home"
import { run } from "../../src/util/process"

export const ROOT = `${import.meta.dir}/../..`
export const BIN = `${ROOT}/node_modules/.bin`

/** A real OpenCode config with an offline local provider (the @ai-sdk/openai-compatible shape OpenCode bundles) plus variants. */
export const OPENCODE_CONFIG = {
  enabled_providers: ["local"],
  provider: {
    local: {
      npm: "@ai-sdk/openai-compatible",
      options: { baseURL: "http://127.0.0.1:9/v1", apiKey: "x" },
      models: {
        m: {
          tool_call: true,
          limit: { context: 100000, output: 4096 },
          variants: { low: { reasoningEffort: "low" }, high: { reasoningEffort: "high" } },
        },
        n: { tool_call: true, limit: { context: 100000, output: 4096 } },
      },
    },
  },
}

export interface Machine extends Disposable {
  dir: string
  home: string
  env: Env
  paths: ReturnType<typeof resolvePaths>
  /** The binary install copies into current/ (built by scripts/test.ts before the tests). */
  binary: string
  opencode: string
  write(path: string, content: string, mode?: number): string
}

/** HOME, every XDG dir and both clients' config dirs inside `home`; PATH finds the pinned opencode first. */
export const homeEnv = (home: string): Env => ({
  HOME: home,
  PATH: `${BIN}:/usr/bin:/bin`,
  XDG_CONFIG_HOME: `${home}/.config`,
  XDG_DATA_HOME: `${home}/.local/share`,
  XDG_STATE_HOME: `${home}/.local/state`,
  XDG_CACHE_HOME: `${home}/.cache`,
  CODEX_HOME: `${home}/.codex`,
  CLAUDE_CONFIG_DIR: `${home}/.claude`,
})

export function machine(): Machine {
  const dir = mkdtempSync(`${tmpdir()}/omo-install-`)
  const home = `${dir}/home`
  const catalog = `${dir}/models-catalog.json`
  const env: Env = {
    ...homeEnv(home),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    // As the scripted home does (src/model/home.ts): the local provider is declared whole, so OpenCode's
    // bundled catalog of real providers is pinned to an empty one rather than parsed at every start.
    OPENCODE_MODELS_PATH: catalog,
  }
  const write = (path: string, content: string, mode = 0o644) => {
    mkdirSync(path.slice(0, path.lastIndexOf("/")), { recursive: true })
    writeFileSync(path, content, { mode })
    return path
  }
  write(catalog, "{}")
  write(`${home}/.config/opencode/opencode.json`, JSON.stringify(OPENCODE_CONFIG))
  // A throwaway home skips OpenCode's npm install of @opencode-ai/plugin (see seedPluginDependencies).
  mkdirSync(`${home}/.config/opencode/node_modules`, { recursive: true })
  write(`${home}/.config/opencode/package-lock.json`, JSON.stringify(PLUGIN_DEPENDENCY_LOCK))
  return {
    dir,
    home,
    env,
    paths: resolvePaths(readFlags(env)),
    binary: `${ROOT}/dist/opencode-mcp-orchestrator`,
    opencode: `${BIN}/opencode`,
    write,
    [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }),
  }
}

/**
 * One machine installed once for a file's tests (`install` runs at the first use): `use` gets it, and the
 * machine's directory is copied before and put back after, so whatever a test breaks, every test starts
 * from the installation as it was made. The install (OpenCode's first start on a fresh HOME, the client
 * CLIs) is most of such a test's time. Call `dispose` from afterAll. Uses run one at a time: a test that
 * timed out goes on running after bun moved to the next, and the next use waits until it has put the
 * machine back (it may time out itself, but it never starts on a half-restored machine).
 */
export function sharedInstallation(install: (m: Machine) => Promise<void>) {
  const m = machine()
  let ready: Promise<void> | undefined
  /** The last use, settled once its body ended and the machine was put back. */
  let previous: Promise<unknown> = Promise.resolve()
  return {
    use<T>(body: (m: Machine) => Promise<T>): Promise<T> {
      const turn = previous.then(async () => {
        ready ??= install(m)
        await ready
        const saved = `${m.dir}.saved`
        cpSync(m.dir, saved, { recursive: true, verbatimSymlinks: true })
        try {
          return await body(m)
        } finally {
          rmSync(m.dir, { recursive: true, force: true })
          renameSync(saved, m.dir)
        }
      })
      // The next use waits for this one whatever its outcome; the failure itself is this test's.
      previous = turn.catch(() => undefined)
      return turn
    },
    dispose: () => m[Symbol.dispose](),
  }
}

export function doctorDepsFor(m: Machine, over: Partial<DoctorDeps> = {}): DoctorDeps {
  const flags = readFlags(m.env)
  return {
    paths: m.paths,
    homes: clientHomes(flags),
    launchers: LAUNCHERS,
    run,
    opencode: m.opencode,
    env: m.env,
    probes: async () => [{ id: "sandbox:stub", status: "pass", detail: "stubbed in this test" }],
    ...over,
  }
}

export function installDepsFor(m: Machine, over: Partial<InstallDeps> = {}): InstallDeps & { lines: string[] } {
  const flags = readFlags(m.env)
  const lines: string[] = []
  return {
    paths: m.paths,
    homes: clientHomes(flags),
    env: m.env,
    run,
    launchers: LAUNCHERS,
    opencode: m.opencode,
    binary: m.binary,
    appVersion: "0.0.0-test",
    print: (line) => lines.push(line),
    doctor: async () =>
      (await runDoctor(doctorDepsFor(m), { sandboxProbes: false, live: false })).verdict === "DOCTOR_UNHEALTHY" ? 1 : 0,
    lines,
    ...over,
  }
}

export const installYes = (m: Machine, options: InstallOptions, over: Partial<InstallDeps> = {}) => {
  const deps = installDepsFor(m, over)
  return install(deps, options).then((code) => ({ code, lines: deps.lines }))
}
