// The folders of src import one another without a cycle, so they stand on floors: util at the bottom,
// then the vocabularies (policy, config), the effects (workspace, sandbox, opencode), the engine, and the
// adapters (mcp, cli) on top. A call from a tool handler then goes back up a floor only through a callback
// it was handed: in a delegation, the relay that carries asks to the person and the progress reporter
// (src/mcp/calls.ts), nothing else. The checker is one function over the import edges; the control plants
// the kind of edge that once closed a loop (a vocabulary importing the sandbox) and the same checker
// must name the loop.
import { describe, expect, test } from "bun:test"
import { dirname, relative, resolve } from "node:path"

const SRC = resolve(import.meta.dir, "../../src")
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)["']([^"']+)["']/g

/** The folder of src a path is in; files directly in src form the floor "(root)". */
function folderOf(path: string): string {
  const parts = relative(SRC, path).split("/")
  return parts.length > 1 ? parts[0]! : "(root)"
}

/**
 * The file an import specifier names: `../sandbox` is the folder's door, `sandbox/index.ts`, so it counts
 * as an edge to that folder (read as a file directly in src, it would be the floor "(root)" and the edge
 * would vanish). `folders` are the directories of src, so the planted controls resolve without a disk.
 */
function importTarget(from: string, specifier: string, folders: Set<string>): string {
  const target = resolve(dirname(resolve(SRC, from)), specifier)
  return folders.has(relative(SRC, target)) ? `${target}/index.ts` : target
}

/** Folder → the other folders its files import. */
function folderEdges(files: Array<[string, string]>): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>()
  const folders = new Set(
    files.flatMap(([file]) =>
      dirname(file)
        .split("/")
        .map((_, i, all) => all.slice(0, i + 1).join("/")),
    ),
  )
  for (const [file, source] of files) {
    const from = folderOf(resolve(SRC, file))
    for (const match of source.matchAll(SPECIFIER)) {
      const target = importTarget(file, match[1]!, folders)
      if (!match[1]!.startsWith(".") || !target.startsWith(`${SRC}/`)) continue
      const to = folderOf(target)
      if (to !== from) edges.set(from, (edges.get(from) ?? new Set()).add(to))
    }
  }
  return edges
}

/** Every loop in the graph, each as `a > b > … > a` starting from its first folder in name order. */
function loops(edges: Map<string, Set<string>>): string[] {
  const found = new Set<string>()
  const walk = (path: string[]) => {
    for (const next of [...(edges.get(path.at(-1)!) ?? [])].sort()) {
      const at = path.indexOf(next)
      if (at >= 0) {
        const loop = path.slice(at)
        const start = loop.indexOf([...loop].sort()[0]!)
        found.add([...loop.slice(start), ...loop.slice(0, start), loop[start]].join(" > "))
      } else walk([...path, next])
    }
  }
  for (const folder of [...edges.keys()].sort()) walk([folder])
  return [...found].sort()
}

async function sources(): Promise<Array<[string, string]>> {
  const files = await Array.fromAsync(new Bun.Glob("**/*.ts").scan({ cwd: SRC }))
  return Promise.all(
    files.sort().map(async (file) => [file, await Bun.file(`${SRC}/${file}`).text()] as [string, string]),
  )
}

describe("src's floors", () => {
  test("no folder of src imports, through any chain of folders, one that imports it", async () => {
    const edges = folderEdges(await sources())
    expect(edges.get("mcp")?.has("engine")).toBe(true)
    expect(loops(edges)).toEqual([])
  })

  test("control: a vocabulary importing the sandbox closes a loop, and the checker names it", async () => {
    const planted: [string, string] = ["policy/planted.ts", 'import { BROAD_ROOTS } from "../sandbox/host-paths"\n']
    expect(loops(folderEdges([...(await sources()), planted]))).toContain("config > policy > sandbox > config")
  })

  test("control: an import of a folder's door (`../sandbox`) is an edge to that folder", () => {
    const files: Array<[string, string]> = [
      ["sandbox/index.ts", 'export { glob } from "../workspace/glob"\n'],
      ["workspace/glob.ts", "export const glob = 1\n"],
      ["workspace/scope.ts", 'import { planFor } from "../sandbox"\n'],
    ]
    expect(loops(folderEdges(files))).toEqual(["sandbox > workspace > sandbox"])
  })

  test("control: an engine module reaching into the MCP layer is a loop too", () => {
    const files: Array<[string, string]> = [
      ["mcp/calls.ts", 'import { Delegations } from "../engine/lifecycle"\n'],
      ["engine/planted.ts", 'import { followTask } from "../mcp/calls"\n'],
    ]
    expect(loops(folderEdges(files))).toEqual(["engine > mcp > engine"])
  })
})
