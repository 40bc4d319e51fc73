// Which folder may import which, read from the sources: install stands beside doctor, not on it
// (doctor runs after install, so install importing doctor would be a cycle in waiting); the engine
// does not reach into the MCP layer that drives it; the plugin bundle takes only the zod-free agent
// names, never the renderer with its templates. Adapters (MCP tools, CLI commands) are held the other way
// round, to a list of what they may import: the engine's surface (src/engine/index.ts) and their own
// layer's shared modules, so a use case cannot grow back into a tool or a command.
import { describe, expect, test } from "bun:test"
import { dirname, relative, resolve } from "node:path"

const ROOT = resolve(import.meta.dir, "../..")

interface Rule {
  from: string
  to: string
  /** Files under `to` that `from` may import all the same. */
  except?: string[]
}

const RULES: Rule[] = [
  { from: "src/install", to: "src/doctor" },
  { from: "src/engine", to: "src/mcp" },
  { from: "plugin", to: "src/agents", except: ["src/agents/names.ts"] },
]

/** An adapter folder: the only modules (exact, or a folder when ending in "/") and packages its files import. */
interface Adapters {
  from: string
  only: string[]
  packages: string[]
  /** Files that wire the engine rather than adapt it: exempt, each with the reason. */
  roots?: Record<string, string>
  /** Files that may import a few more modules, each with the reason. */
  extra?: Record<string, { imports: string[]; reason: string }>
}

const WIRES_EFFECTS = "wires install/doctor to the real process runner and the sandbox launchers"

const ADAPTERS: Adapters[] = [
  {
    from: "src/mcp/tools",
    // The surface's terms on their own, so a tool declared at start loads no engine (startup.test.ts).
    only: ["src/engine", "src/engine/terms", "src/mcp/"],
    packages: ["zod", "@modelcontextprotocol/server"],
  },
  {
    from: "src/cli",
    only: [
      "src/engine",
      "src/cli/",
      "src/install/",
      "src/doctor/",
      "src/config/paths",
      "src/config/flags",
      "src/config/integer",
      "src/errors",
      "src/version",
    ],
    packages: ["citty"],
    roots: {
      "src/cli/main.ts": "the entry point: dispatches to every command and to the apply step",
      "src/cli/serve.ts": "the composition root: builds the runtime, the delegations and the MCP server",
      "src/cli/supervise.ts": "the watchdog: owns a runtime and the shared OpenCode server's lease",
      "src/cli/apply-step.ts": "the confined apply step's entry point, run as a process of its own",
      "src/cli/scripted-model.ts": "the scripted model's entry point, a server of its own",
      "src/cli/demo.ts": "starts the scripted model for the offline demo",
    },
    extra: {
      "src/cli/doctor.ts": { imports: ["src/util/process", "src/sandbox"], reason: WIRES_EFFECTS },
      "src/cli/install.ts": { imports: ["src/util/process", "src/sandbox"], reason: WIRES_EFFECTS },
      "src/cli/uninstall.ts": { imports: ["src/util/process"], reason: WIRES_EFFECTS },
      "src/cli/run.ts": { imports: ["src/util/suggest"], reason: "did-you-mean for a mistyped command" },
      "src/cli/strict.ts": { imports: ["src/util/suggest"], reason: "did-you-mean for a mistyped flag" },
      "src/cli/watch.ts": {
        imports: ["src/util/process", "src/opencode/client", "src/opencode/session"],
        reason: "hands the terminal to OpenCode's UI; the client, loaded lazily, only finds the session's directory",
      },
      "src/cli/sessions.ts": {
        imports: ["src/opencode/client"],
        reason: "loaded lazily, only when a server runs: the client is large",
      },
    },
  },
]

// Static imports and re-exports (however many lines the braces span), side-effect imports and dynamic imports.
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g

/** The module paths (relative to the repository, without extension) a source file imports. */
function importsOf(file: string, source: string): string[] {
  return [...source.matchAll(SPECIFIER)]
    .map((match) => match[1]!)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => relative(ROOT, resolve(dirname(resolve(ROOT, file)), specifier)).replace(/\.(ts|js)$/, ""))
}

const inside = (path: string, folder: string) => path === folder || path.startsWith(`${folder}/`)

/** The packages (bare specifiers, builtins included) a source file imports. */
const packagesOf = (source: string): string[] =>
  [...source.matchAll(SPECIFIER)].map((match) => match[1]!).filter((specifier) => !specifier.startsWith("."))

/** `file: imported` for every import of `file` outside what its adapter folder allows. */
function adapterViolations(adapters: Adapters, file: string, source: string): string[] {
  if (!inside(file, adapters.from) || adapters.roots?.[file] !== undefined) return []
  const allowed = [...adapters.only, ...(adapters.extra?.[file]?.imports ?? [])]
  const fits = (target: string) =>
    allowed.some((entry) => (entry.endsWith("/") ? inside(target, entry.slice(0, -1)) : target === entry))
  const modules = importsOf(file, source).filter((target) => !fits(target.replace(/\/index$/, "")))
  const fitsPackage = (name: string) =>
    adapters.packages.some((entry) => name === entry || name.startsWith(`${entry}/`))
  return [...modules, ...packagesOf(source).filter((name) => !fitsPackage(name))].map((target) => `${file}: ${target}`)
}

/** `file:imported` for every import of `file` that breaks `rule`. */
function violations(rule: Rule, file: string, source: string): string[] {
  if (!inside(file, rule.from)) return []
  const allowed = (rule.except ?? []).map((path) => path.replace(/\.ts$/, ""))
  return importsOf(file, source)
    .filter((target) => inside(target, rule.to) && !allowed.includes(target))
    .map((target) => `${file}: ${target}`)
}

async function sources(folder: string): Promise<Array<[string, string]>> {
  const files = await Array.fromAsync(new Bun.Glob("**/*.ts").scan({ cwd: resolve(ROOT, folder) }))
  return Promise.all(
    files
      .sort()
      .map(
        async (file) => [`${folder}/${file}`, await Bun.file(resolve(ROOT, folder, file)).text()] as [string, string],
      ),
  )
}

describe("the matcher", () => {
  const rule = RULES[0]!
  test.each([
    ["a named import", 'import { runDoctor } from "../doctor/run"'],
    ["a type import spanning lines", 'import type {\n  DoctorDeps,\n} from "../doctor/run"'],
    ["a re-export", 'export { formatReport } from "../doctor/report"'],
    ["a dynamic import", 'const live = await import("../doctor/live")'],
    ["the folder itself", 'import * as doctor from "../doctor"'],
  ])("catches %s planted in src/install", (_, line) => {
    expect(violations(rule, "src/install/planted.ts", `import { fail } from "../errors"\n${line}\n`)).toHaveLength(1)
  })

  test.each([
    ["a sibling folder with a longer name", "src/install/planted.ts", 'import { x } from "../doctoring/x"'],
    ["a package of the same name", "src/install/planted.ts", 'import { x } from "doctor"'],
    ["the same line outside src/install", "src/cli/planted.ts", 'import { runDoctor } from "../doctor/run"'],
  ])("lets %s pass", (_, file, line) => {
    expect(violations(rule, file, line)).toEqual([])
  })

  test("an excepted file passes, its neighbour does not", () => {
    const plugin = RULES[2]!
    expect(violations(plugin, "plugin/roles.ts", 'import { agentName } from "../src/agents/names"')).toEqual([])
    expect(violations(plugin, "plugin/roles.ts", 'import { renderAgents } from "../src/agents/render"')).toEqual([
      "plugin/roles.ts: src/agents/render",
    ])
  })
})

describe("the adapter rule", () => {
  const [tools, cli] = [ADAPTERS[0]!, ADAPTERS[1]!]
  const tool = "src/mcp/tools/planted.ts"
  const fine = 'import { z } from "zod"\nimport { defineTool } from "../define"\nimport { fail } from "../../engine"\n'

  test("a tool importing the surface, its layer, its .md, zod and SDK types passes", () => {
    const sdk = 'import type { Tool } from "@modelcontextprotocol/server"\n'
    const md = 'import description from "./planted.md" with { type: "text" }\n'
    const index = 'import { Delegations } from "../../engine/index"\n'
    expect(adapterViolations(tools, tool, fine + sdk + md + index)).toEqual([])
  })

  test.each([
    ["an engine module past the surface", 'import { isFinished } from "../../engine/tasks"', "src/engine/tasks"],
    ["a domain folder", 'import { readPatchRecord } from "../../workspace/patches"', "src/workspace/patches"],
    ["the process wrapper, dynamically", 'const { run } = await import("../../util/process")', "src/util/process"],
    ["a re-export of the errors module", 'export { fail } from "../../errors"', "src/errors"],
    ["a builtin", 'import { readFileSync } from "node:fs"', "node:fs"],
    ["another package", 'import { defineCommand } from "citty"', "citty"],
  ])("control: %s planted in a tool is named", (_, line, target) => {
    expect(adapterViolations(tools, tool, `${fine}${line}\n`)).toEqual([`${tool}: ${target}`])
  })

  test("a command may use install, doctor and config paths; a root and an excepted import pass, nothing else", () => {
    const command = 'import { resolvePaths } from "../config/paths"\nimport { clientHomes } from "../install/homes"\n'
    expect(adapterViolations(cli, "src/cli/planted.ts", command)).toEqual([])
    const engineModule = 'import { Delegations } from "../engine/lifecycle"\n'
    expect(adapterViolations(cli, "src/cli/planted.ts", engineModule)).toEqual([
      "src/cli/planted.ts: src/engine/lifecycle",
    ])
    expect(adapterViolations(cli, "src/cli/serve.ts", engineModule)).toEqual([])
    const spawn = 'import { run } from "../util/process"\n'
    expect(adapterViolations(cli, "src/cli/doctor.ts", spawn)).toEqual([])
    expect(adapterViolations(cli, "src/cli/stats.ts", spawn)).toEqual(["src/cli/stats.ts: src/util/process"])
    expect(adapterViolations(cli, "src/cli/stats.ts", 'import { readSchema } from "../config/schema"')).toEqual([
      "src/cli/stats.ts: src/config/schema",
    ])
  })

  test("every exception names a file that exists, with a reason", async () => {
    for (const adapters of ADAPTERS) {
      const named = { ...adapters.roots, ...adapters.extra }
      for (const [file, why] of Object.entries(named)) {
        expect(await Bun.file(resolve(ROOT, file)).exists()).toBe(true)
        expect(typeof why === "string" ? why : why.reason).not.toBe("")
      }
    }
  })
})

describe("the sources", () => {
  test.each(
    RULES.map(
      (rule) => [`${rule.from} → ${rule.to}${rule.except ? ` (except ${rule.except.join(", ")})` : ""}`, rule] as const,
    ),
  )("no import %s", async (_, rule) => {
    const files = await sources(rule.from)
    expect(files.length).toBeGreaterThan(3)
    expect(files.flatMap(([file, source]) => violations(rule, file, source))).toEqual([])
  })

  test.each(ADAPTERS.map((adapters) => [adapters.from, adapters] as const))(
    "the adapters in %s import only the engine's surface and what their rule allows",
    async (_, adapters) => {
      const files = await sources(adapters.from)
      expect(files.length).toBeGreaterThan(3)
      expect(files.flatMap(([file, source]) => adapterViolations(adapters, file, source))).toEqual([])
    },
  )

  test("the plugin does use the agent names (so the plugin rule has something to check)", async () => {
    const files = await sources("plugin")
    expect(files.some(([file, source]) => importsOf(file, source).includes("src/agents/names"))).toBe(true)
  })
})
