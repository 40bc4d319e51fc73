// A task record changes one way: TaskStore.update applies the edit to the record this process holds,
// bumps its revision, stamps it and saves it (src/engine/store/task-store.ts). A revision bumped anywhere else is
// a change made beside that path, one a waiter may miss or a save may leave unwritten; read from the
// sources, every form of bump outside update's own body is refused.
import { describe, expect, test } from "bun:test"
import { resolve } from "node:path"

const ROOT = resolve(import.meta.dir, "../..")
const STORE = "src/engine/store/task-store.ts"

// `x.revision++`, `++x.revision`, `x.revision += 1`, `x.revision = …` (not `==`), and the same on a
// destructured or bracketed name.
const BUMP = /(?:\+\+|--)\s*[\w$.?!\]["']*\brevision\b|\brevision\b["'\]]*\s*(?:\+\+|--|[-+*]?=(?!=))/g

/** The body of TaskStore's `update` method, where the one bump lives. */
function updateBody(source: string): [number, number] | undefined {
  const start = source.indexOf("\n  update(")
  if (start < 0) return undefined
  const end = source.indexOf("\n  }\n", start)
  return end < 0 ? undefined : [start, end]
}

/** `file:line` for every revision bump in `source` outside TaskStore.update. */
function bumps(file: string, source: string): string[] {
  const allowed = file === STORE ? updateBody(source) : undefined
  return [...source.matchAll(BUMP)]
    .filter((match) => !allowed || match.index < allowed[0] || match.index > allowed[1])
    .map((match) => `${file}:${source.slice(0, match.index).split("\n").length}`)
}

async function sources(folder: string): Promise<Array<[string, string]>> {
  const files = await Array.fromAsync(new Bun.Glob("**/*.ts").scan({ cwd: resolve(ROOT, folder) }))
  return Promise.all(
    files
      .sort()
      .map(async (file) => [`${folder}/${file}`, await Bun.file(resolve(ROOT, folder, file)).text()] as const),
  )
}

describe("the matcher", () => {
  test.each([
    ["a post-increment", "record.revision++"],
    ["a pre-increment", "++live.record.revision"],
    ["an add-assign", "current.revision += 1"],
    ["an assignment", "record.revision = record.revision + 1"],
    ["an assignment without spaces", "record.revision=7"],
    ["a bracketed name", 'record["revision"]++'],
    ["a decrement", "record.revision--"],
    ["a non-null assertion", "live!.revision++"],
  ])("catches %s planted in the engine", (_, line) => {
    expect(bumps("src/engine/runs/runs.ts", `const x = 1\n${line}\n`)).toEqual(["src/engine/runs/runs.ts:2"])
  })

  test.each([
    ["a new record's field", "revision: 0,"],
    ["a comparison", "if (current.revision !== seen.revision) return false"],
    ["an equality", "polled.revision === record.revision"],
    ["a read", "return wait(this.runs, id, 5000, record.revision)"],
    ["a longer name", "record.revisions++"],
  ])("lets %s pass", (_, line) => {
    expect(bumps("src/engine/runs/runs.ts", line)).toEqual([])
  })

  test("the store's own update may bump; the same line elsewhere in the store may not", async () => {
    const store = await Bun.file(resolve(ROOT, STORE)).text()
    expect(bumps(STORE, store)).toEqual([])
    const planted = store.replace("  async list(): Promise<TaskRecord[]> {", "$&\n    record.revision++")
    expect(planted).not.toBe(store)
    expect(bumps(STORE, planted)).toHaveLength(1)
    // Without its update method the store is like any other file.
    expect(bumps(STORE, store.replace("\n  update(", "\n  renamed("))).not.toEqual([])
  })
})

test("no revision is bumped outside TaskStore.update, in src or the plugin", async () => {
  const found = [...(await sources("src")), ...(await sources("plugin"))].flatMap(([file, source]) =>
    bumps(file, source),
  )
  expect(found).toEqual([])
})

test("the store has its update, and it bumps the revision", async () => {
  const store = await Bun.file(resolve(ROOT, STORE)).text()
  const body = updateBody(store)
  expect(body).toBeDefined()
  expect([...store.slice(...body!).matchAll(BUMP)]).toHaveLength(1)
})
