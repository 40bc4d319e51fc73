// No TypeScript line in src/, plugin/ or scripts/ runs past 120 columns, the house width (biome's
// lineWidth). The formatter breaks code; it cannot break a comment, a string or a regular expression,
// and a line too long to read also hides a one-line copy from the duplicate finder.
import { describe, expect, test } from "bun:test"

const ROOT = `${import.meta.dir}/../..`
const WIDTH = 120

/** `line: columns` for every line of `source` wider than the house width. */
function wide(source: string): string[] {
  return source
    .split("\n")
    .flatMap((line, index) => (line.length > WIDTH ? [`${index + 1}: ${line.length} columns`] : []))
}

async function sources(): Promise<string[]> {
  const files: string[] = []
  for (const dir of ["src", "plugin", "scripts"])
    for await (const file of new Bun.Glob("**/*.ts").scan(`${ROOT}/${dir}`)) files.push(`${dir}/${file}`)
  return files.sort()
}

describe("line width", () => {
  test("control: a planted line of 121 columns is found, one of 120 is not", () => {
    expect(wide(`const a = 1\n${"x".repeat(121)}\n`)).toEqual(["2: 121 columns"])
    expect(wide(`// ${"x".repeat(117)}\n`)).toEqual([])
  })

  test("every line of src/, plugin/ and scripts/ fits in 120 columns", async () => {
    const found: string[] = []
    for (const file of await sources()) {
      for (const line of wide(await Bun.file(`${ROOT}/${file}`).text())) found.push(`${file}:${line}`)
    }
    expect(found).toEqual([])
  })
})
