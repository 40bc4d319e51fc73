// The counter behind route.test.ts: the routes a delegation takes through src, read from the async stacks
// recorded as it ran, against the import graph read from the source. A call whose callee the caller does not
// import (directly or through others) goes against the import direction: a callback handed down, a climb
// back up. Pure: stacks and sources in, figures out.
import { dirname, relative, resolve } from "node:path"

export const SRC = resolve(import.meta.dir, "../../src")
const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(?\s*)["'](\.[^"']*)["']/g
/** A stack frame's file, in Bun's `at name (file:line:col)` or `at file:line:col`. */
const FRAME = /\bat (?:async )?(?:.*? \()?(\/[^():]+\.ts):\d+:\d+\)?$/

export type ImportGraph = Map<string, Set<string>>

/** File (relative to src) → the files of src it imports, from `sources` (file → its text). */
export function importGraph(sources: Map<string, string>): ImportGraph {
  const graph: ImportGraph = new Map()
  for (const [file, source] of sources) {
    const targets = new Set<string>()
    for (const match of source.matchAll(SPECIFIER)) {
      const base = relative(SRC, resolve(dirname(`${SRC}/${file}`), match[1]!))
      const target = [`${base}.ts`, `${base}/index.ts`, base].find((candidate) => sources.has(candidate))
      if (target) targets.add(target)
    }
    graph.set(file, targets)
  }
  return graph
}

/** Every .ts file of src with its text. */
export async function readSources(): Promise<Map<string, string>> {
  const files = [...new Bun.Glob("**/*.ts").scanSync({ cwd: SRC })]
  return new Map(await Promise.all(files.map(async (file) => [file, await Bun.file(`${SRC}/${file}`).text()] as const)))
}

/** Whether `from` imports `to`, directly or through other files. */
function below(graph: ImportGraph, from: string, to: string): boolean {
  const seen = new Set([from])
  const queue = [from]
  while (queue.length > 0)
    for (const next of graph.get(queue.shift()!) ?? []) {
      if (next === to) return true
      if (!seen.has(next)) queue.push(seen.add(next) && next)
    }
  return false
}

/**
 * The files of src a stack passes, outermost caller first, a file's consecutive frames as one; files under
 * `skip` (folders of src that run in the measuring process but are not the delegation's) are left out.
 */
export function routeOf(stack: string, skip: string[] = []): string[] {
  const files = stack
    .split("\n")
    .map((line) => FRAME.exec(line.trim())?.[1])
    .filter((file): file is string => file?.startsWith(`${SRC}/`) === true)
    .map((file) => relative(SRC, file))
    .filter((file) => !skip.some((folder) => file.startsWith(`${folder}/`)))
    .reverse()
  return files.filter((file, i) => file !== files[i - 1])
}

/** The files the routes cross, and each call against the import direction (`caller → callee`) once. */
export function measure(routes: string[][], graph: ImportGraph): { files: string[]; climbs: string[] } {
  const climbs = new Set<string>()
  for (const route of routes)
    for (const [i, callee] of route.entries())
      if (i > 0 && !below(graph, route[i - 1]!, callee)) climbs.add(`${route[i - 1]} → ${callee}`)
  return { files: [...new Set(routes.flat())].sort(), climbs: [...climbs].sort() }
}
