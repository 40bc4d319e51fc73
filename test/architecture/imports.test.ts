// Which folder may import which, read from the sources: install stands beside doctor, not on it
// (doctor runs after install, so install importing doctor would be a cycle in waiting); the engine
// does not reach into the MCP layer that drives it; the plugin bundle takes only the zod-free agent
// names, never the renderer with its templates.
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

  test("the plugin does use the agent names (so the plugin rule has something to check)", async () => {
    const files = await sources("plugin")
    expect(files.some(([file, source]) => importsOf(file, source).includes("src/agents/names"))).toBe(true)
  })
})
