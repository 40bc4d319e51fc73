// An error dropped on purpose says why: every `.catch(() => undefined)` (or `{}`) in src/ and plugin/
// has a comment on its line or just above it. A dropped error with no reason is how a failure turns
// into a silent wrong answer; the reason is what a reader needs to judge it.
import { describe, expect, test } from "bun:test"

const ROOT = `${import.meta.dir}/../..`
const SILENT = /\.catch\(\(\) => (undefined|\{\})\)/

/** Lines (1-based) that drop an error with no comment on that line or the two lines before it. */
export function unexplained(source: string): number[] {
  const lines = source.split("\n")
  const found: number[] = []
  lines.forEach((line, index) => {
    if (!SILENT.test(line)) return
    const context = lines.slice(Math.max(0, index - 2), index + 1)
    if (!context.some((candidate) => candidate.includes("//") || candidate.trimStart().startsWith("*")))
      found.push(index + 1)
  })
  return found
}

describe("dropped errors", () => {
  test("control: an unexplained drop is found, an explained one is not", () => {
    expect(unexplained("const a = 1\nawait rm(x).catch(() => undefined)\n")).toEqual([2])
    expect(unexplained("// gone already is fine\nawait rm(x).catch(() => undefined)\n")).toEqual([])
    expect(unexplained("await rm(x).catch(() => {}) // best effort: the caller reports\n")).toEqual([])
  })

  test("every one in src/ and plugin/ says why", async () => {
    const missing: string[] = []
    for (const dir of ["src", "plugin"])
      for await (const file of new Bun.Glob("**/*.ts").scan(`${ROOT}/${dir}`))
        for (const line of unexplained(await Bun.file(`${ROOT}/${dir}/${file}`).text()))
          missing.push(`${dir}/${file}:${line}`)
    expect(missing).toEqual([])
  })
})
