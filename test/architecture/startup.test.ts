// What `serve` loads before its first tool call, read from the sources: every module reachable from
// src/cli/serve.ts through static value imports (a type-only import is erased; a dynamic one loads when
// it runs). The tools and their zod schemas, the engine's surface and use cases, the OpenCode client, the
// config schema and the other commands stay out: the first call loads them (src/mcp/server.ts, serve.ts,
// src/mcp/define.ts), so `initialize` and `tools/list` cost the SDK and the written list
// (dist/tools-list.json, written by the build). `bench --only footprint` measures what that buys.
import { describe, expect, test } from "bun:test"
import { dirname, relative, resolve } from "node:path"

const ROOT = resolve(import.meta.dir, "../..")
const SERVE = "src/cli/serve.ts"

/** Loaded with the first call, never at start: each a module, or a folder when ending in "/". */
const LATER = [
  "src/mcp/toolset.ts",
  "src/mcp/tools/",
  "src/mcp/shared.ts",
  "src/engine/index.ts",
  "src/engine/lifecycle.ts",
  "src/engine/capacity/runtime.ts",
  "src/engine/store/task-store.ts",
  "src/opencode/client.ts",
  "src/config/schema.ts",
  "src/config/load.ts",
  "src/workspace/patches/patches.ts",
  "src/install/",
  "src/doctor/",
  "src/model/",
]

// `import … from`, `export … from` and `import "x"`, at the start of a line; `import type` and `export type` are not.
const STATIC = /^(?:import|export)\s+(?!type\b)([\s\S]*?)\s*from\s*["']([^"']+)["']|^import\s*["']([^"']+)["']/gm

/** The relative specifiers of the value imports in `source`; braces of nothing but `type` names count as types. */
function valueImports(source: string): string[] {
  const found: string[] = []
  for (const match of source.matchAll(STATIC)) {
    const clause = match[1] ?? ""
    const names = /\{([\s\S]*)\}/.exec(clause)?.[1]
    const outside = clause
      .replace(/\{[\s\S]*\}/, "")
      .replace(/,/g, "")
      .trim()
    const onlyTypes =
      names !== undefined &&
      !outside &&
      names
        .split(",")
        .map((name) => name.trim())
        .filter(Boolean)
        .every((name) => name.startsWith("type "))
    if (!onlyTypes) found.push(match[2] ?? match[3]!)
  }
  return found.filter((specifier) => specifier.startsWith("."))
}

async function resolveModule(from: string, specifier: string): Promise<string> {
  const base = resolve(dirname(resolve(ROOT, from)), specifier)
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, base])
    if (await Bun.file(candidate).exists()) return relative(ROOT, candidate)
  throw new Error(`${from}: ${specifier} resolves to no file`)
}

/** Every module `start` loads, each with the module that first imported it; `planted` replaces sources by path. */
async function loadedFrom(start: string, planted: Record<string, string> = {}): Promise<Map<string, string>> {
  const seen = new Map<string, string>([[start, "(start)"]])
  const queue = [start]
  while (queue.length > 0) {
    const file = queue.shift()!
    if (!file.endsWith(".ts")) continue
    const source = planted[file] ?? (await Bun.file(resolve(ROOT, file)).text())
    for (const specifier of valueImports(source)) {
      const target = await resolveModule(file, specifier)
      if (seen.has(target)) continue
      seen.set(target, file)
      queue.push(target)
    }
  }
  return seen
}

/** `module ← importer` for each loaded module that should wait for the first call. */
const tooEarly = (loaded: Map<string, string>) =>
  [...loaded]
    .filter(([file]) => LATER.some((later) => (later.endsWith("/") ? file.startsWith(later) : file === later)))
    .map(([file, by]) => `${file} ← ${by}`)

describe("serve's start", () => {
  test("loads the MCP layer and the written list, and nothing the first call loads", async () => {
    const loaded = await loadedFrom(SERVE)
    expect(tooEarly(loaded)).toEqual([])
    // It does reach what it must (so the walk above has something to find).
    for (const needed of ["src/mcp/server.ts", "src/mcp/stdio.ts", "dist/tools-list.json"])
      expect({ needed, loaded: loaded.has(needed) }).toEqual({ needed, loaded: true })
  })

  test("every module named in the list exists", async () => {
    for (const later of LATER) {
      const path = resolve(ROOT, later)
      const exists = later.endsWith("/")
        ? (await Array.fromAsync(new Bun.Glob("*.ts").scan({ cwd: path }))).length > 0
        : await Bun.file(path).exists()
      expect({ later, exists }).toEqual({ later, exists: true })
    }
  })

  test("the first call loads them: the tools by server.ts's dynamic import, the engine by serve.ts's", async () => {
    expect(await Bun.file(resolve(ROOT, "src/mcp/server.ts")).text()).toContain('import("./toolset")')
    expect(await Bun.file(resolve(ROOT, SERVE)).text()).toContain('await import("../engine")')
    expect(tooEarly(await loadedFrom("src/mcp/toolset.ts"))).not.toEqual([])
    expect(tooEarly(await loadedFrom("src/engine/index.ts"))).not.toEqual([])
  })

  test.each([
    ["the server importing the tools", "src/mcp/server.ts", 'import { TOOLS } from "./toolset"'],
    [
      "the MCP layer importing a use case from the surface",
      "src/mcp/calls.ts",
      'import { readPatchRecord } from "../engine"',
    ],
    ["the replies importing the config schema", "src/mcp/replies.ts", 'import { ROLES } from "../config/schema"'],
    ["serve.ts importing the runtime", SERVE, 'import { Runtime } from "../engine/capacity/runtime"'],
  ])("control: %s is caught", async (_, file, line) => {
    const source = await Bun.file(resolve(ROOT, file)).text()
    expect(tooEarly(await loadedFrom(SERVE, { [file]: `${line}\n${source}` }))).not.toEqual([])
  })

  test.each([
    ["a type-only import", 'import type { Runtime } from "../engine/capacity/runtime"'],
    ["type names in braces", 'import { type Runtime } from "../engine/capacity/runtime"'],
    ["a dynamic import", 'const later = () => import("../engine/capacity/runtime")'],
  ])("control: %s loads nothing at start", async (_, line) => {
    const source = await Bun.file(resolve(ROOT, SERVE)).text()
    expect(tooEarly(await loadedFrom(SERVE, { [SERVE]: `${line}\n${source}` }))).toEqual([])
  })
})
