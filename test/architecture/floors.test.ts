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

// Inside the two large folders, the same rule one level down: their packages stand on floors, and each is
// entered through its one door, its index.ts. The engine's packages (records, ledger, store, capacity,
// admission, turn, outcome, runs, retention) carry its use cases, the engine's own files, on top; the
// workspace's packages (git, snapshot, patches, write-step, apply, worktree) stand on its own files, leaves
// below them (names, disk, scope, the workspace root, git's object ids). engine/terms.ts alone reaches past
// the doors: it takes each word from the leaf module that declares it, so a tool declared at start loads that
// module and not its package (startup.test.ts). Tests may reach a package's inside; src may not.
const HOUSES = [
  { folder: "engine", root: "use cases, on top" },
  { folder: "workspace", root: "leaves, below" },
] as const
type House = (typeof HOUSES)[number]
const ROOT_FILES = "(root)"
const TERMS = `${SRC}/engine/terms.ts`

/** The package of `house` a file is in, ROOT_FILES for the house's own files, undefined outside it. */
function packageOf(path: string, house: House): string | undefined {
  const parts = relative(`${SRC}/${house.folder}`, path).split("/")
  if (parts[0] === ".." || parts[0] === "") return undefined
  return parts.length > 1 ? parts[0]! : ROOT_FILES
}

/** Each import of a src file as (importing file, the file or folder door it names), both absolute. */
function importsOf(files: Array<[string, string]>): Array<[string, string]> {
  const folders = new Set(
    files.flatMap(([file]) =>
      dirname(file)
        .split("/")
        .map((_, i, all) => all.slice(0, i + 1).join("/")),
    ),
  )
  return files.flatMap(([file, source]) =>
    [...source.matchAll(SPECIFIER)]
      .filter((match) => match[1]!.startsWith("."))
      .map((match): [string, string] => [resolve(SRC, file), importTarget(file, match[1]!, folders)]),
  )
}

/** Package → the other packages (or the house's own files) its files import. */
function packageEdges(files: Array<[string, string]>, house: House): Map<string, Set<string>> {
  const edges = new Map<string, Set<string>>()
  for (const [from, target] of importsOf(files)) {
    const [a, b] = [packageOf(from, house), packageOf(target, house)]
    if (a && b && a !== b) edges.set(a, (edges.get(a) ?? new Set()).add(b))
  }
  return edges
}

/** The imports against the house's rule for its own files: a package importing a use case, a leaf importing a package. */
function wrongWay(edges: Map<string, Set<string>>, house: House): string[] {
  if (house.folder === "engine")
    return [...edges].filter(([, to]) => to.has(ROOT_FILES)).map(([from]) => `${from} → ${ROOT_FILES}`)
  return [...(edges.get(ROOT_FILES) ?? [])].map((to) => `${ROOT_FILES} → ${to}`)
}

/** `importer → file` for each import from outside a package that names a file inside it, not its door. */
function pastDoors(files: Array<[string, string]>): string[] {
  return importsOf(files)
    .filter(([from, target]) =>
      HOUSES.some((house) => {
        const inside = packageOf(target, house)
        if (!inside || inside === ROOT_FILES || inside === packageOf(from, house)) return false
        return from !== TERMS && !target.endsWith(`/${house.folder}/${inside}/index.ts`)
      }),
    )
    .map(([from, target]) => `${relative(SRC, from)} → ${relative(SRC, target).replace(/(\.ts)?$/, "")}`)
}

describe.each(HOUSES)("$folder's packages", (house) => {
  test("stand on floors: no package imports, through any chain, one that imports it", async () => {
    const edges = packageEdges(await sources(), house)
    // The walk sees the edges it judges.
    expect(edges.size).toBeGreaterThan(3)
    expect(loops(edges)).toEqual([])
  })

  test(`and the house's own files are ${house.root}`, async () => {
    expect(wrongWay(packageEdges(await sources(), house), house)).toEqual([])
  })
})

describe("the packages' doors", () => {
  test("are the only way in from the rest of src", async () => {
    const files = await sources()
    expect(pastDoors(files)).toEqual([])
    // The walk sees the imports it judges: the use cases do import the packages, through the doors.
    const throughDoor = ([from, target]: [string, string]) =>
      from.endsWith("engine/lifecycle.ts") && target.endsWith("engine/records/index.ts")
    expect(importsOf(files).some(throughDoor)).toBe(true)
  })

  test.each([
    [
      "a use case importing a package's inside",
      "engine/planted.ts",
      'import { isFinished } from "./records/tasks"',
      "engine/records/tasks",
    ],
    [
      "an adapter importing a workspace package's inside",
      "mcp/planted.ts",
      'import { collectPatch } from "../workspace/patches/patch"',
      "workspace/patches/patch",
    ],
  ])("control: %s is named", async (_, file, line, target) => {
    expect(pastDoors([...(await sources()), [file, `${line}\n`]])).toEqual([`${file} → ${target}`])
  })
})

describe("controls of the floors inside a folder", () => {
  test("a package importing one above it closes a loop, and the checker names it", async () => {
    const planted: [string, string] = ["engine/records/planted.ts", 'import type { TaskStore } from "../store"\n']
    expect(loops(packageEdges([...(await sources()), planted], HOUSES[0]))).toContain("records > store > records")
    const apply: [string, string] = ["workspace/git/planted.ts", 'import { applyPatch } from "../apply"\n']
    expect(loops(packageEdges([...(await sources()), apply], HOUSES[1]))).toContain("apply > git > apply")
  })

  test("an engine package importing a use case, and a workspace leaf importing a package, are named", async () => {
    const up: [string, string] = ["engine/store/planted.ts", 'import { Delegations } from "../lifecycle"\n']
    expect(wrongWay(packageEdges([...(await sources()), up], HOUSES[0]), HOUSES[0])).toEqual([`store → ${ROOT_FILES}`])
    const down: [string, string] = ["workspace/planted.ts", 'import { createWorktree } from "./worktree"\n']
    expect(wrongWay(packageEdges([...(await sources()), down], HOUSES[1]), HOUSES[1])).toEqual([
      `${ROOT_FILES} → worktree`,
    ])
  })
})

// No file of src imports, through any chain of imports (type-only ones too), itself: a record's type and
// the code that uses it never close a circle (the parts of a record live with the record).
function fileCircles(files: Array<[string, string]>): string[][] {
  const next = new Map<string, string[]>()
  for (const [from, target] of importsOf(files)) {
    const to = target.endsWith(".ts") || target.endsWith("/index.ts") ? target : `${target}.ts`
    next.set(from, [...(next.get(from) ?? []), to])
  }
  // Tarjan's strongly connected components, iterative so a long chain cannot overflow the stack.
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const circles: string[][] = []
  let counter = 0
  for (const start of next.keys()) {
    if (index.has(start)) continue
    const work: Array<[string, number]> = [[start, 0]]
    index.set(start, counter)
    low.set(start, counter++)
    stack.push(start)
    onStack.add(start)
    while (work.length > 0) {
      const frame = work.at(-1)!
      const [node, i] = frame
      const targets = next.get(node) ?? []
      if (i < targets.length) {
        frame[1]++
        const to = targets[i]!
        if (!index.has(to)) {
          index.set(to, counter)
          low.set(to, counter++)
          stack.push(to)
          onStack.add(to)
          work.push([to, 0])
        } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!))
        continue
      }
      work.pop()
      if (work.length > 0) {
        const parent = work.at(-1)![0]
        low.set(parent, Math.min(low.get(parent)!, low.get(node)!))
      }
      if (low.get(node) === index.get(node)) {
        const component: string[] = []
        let member: string
        do {
          member = stack.pop()!
          onStack.delete(member)
          component.push(relative(SRC, member))
        } while (member !== node)
        if (component.length > 1) circles.push(component.sort())
      }
    }
  }
  return circles
}

describe("src's files", () => {
  test("import one another without a circle", async () => {
    expect(fileCircles(await sources())).toEqual([])
  })

  test("control: a type a record's file takes back from a file that uses the record closes a circle", async () => {
    const planted: [string, string] = ["engine/records/tasks.ts", 'import type { Settler } from "../outcome/settle"\n']
    const files = (await sources()).map(([file, source]): [string, string] =>
      file === planted[0] ? [file, planted[1] + source] : [file, source],
    )
    const circles = fileCircles(files)
    expect(circles.length).toBe(1)
    expect(circles[0]).toContain("engine/records/tasks.ts")
    expect(circles[0]).toContain("engine/outcome/settle.ts")
  })
})
