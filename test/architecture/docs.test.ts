// The README is for a person deciding and starting; the reference lives in docs/, one page a subject.
// Pinned: the README fits a first read (at most 300 lines), links every docs page, and every relative
// link in the README and the pages names a file that exists (an anchor, a heading on that page). The
// checker is one function over texts, so the controls plant an unlinked page and a broken link.
import { describe, expect, test } from "bun:test"
import { readdirSync, readFileSync } from "node:fs"
import { resolve } from "node:path"

const ROOT = resolve(import.meta.dir, "../..")
const README_MAX_LINES = 300
const LINK = /\]\(([^)\s]+)\)/g

/** GitHub's anchor for a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- _]/gu, "")
    .replace(/ /g, "-")

/** What is wrong with the README and the pages: each problem one line. `pages` maps `docs/x.md` to text. */
function docsProblems(readme: string, pages: Map<string, string>): string[] {
  const problems: string[] = []
  const lines = readme.split("\n").length - (readme.endsWith("\n") ? 1 : 0)
  if (lines > README_MAX_LINES) problems.push(`README.md has ${lines} lines, over ${README_MAX_LINES}`)
  const linked = new Set([...readme.matchAll(LINK)].map((m) => m[1]!.split("#")[0]!))
  for (const page of pages.keys()) if (!linked.has(page)) problems.push(`${page} is not linked from README.md`)
  const headings = (text: string) => new Set([...text.matchAll(/^#+ (.*)$/gm)].map((m) => anchorOf(m[1]!)))
  const texts = new Map([["README.md", readme], ...pages])
  for (const [from, text] of texts) {
    for (const [, target] of text.matchAll(LINK)) {
      if (/^[a-z]+:/.test(target!)) continue
      const [file, anchor] = target!.split("#") as [string, string | undefined]
      const base = from.includes("/") ? from.slice(0, from.lastIndexOf("/") + 1) : ""
      const path = file ? resolve(`/${base}`, file).slice(1) : from
      const linkedText = path === "LICENSE" ? "" : texts.get(path)
      if (linkedText === undefined) problems.push(`${from}: link to ${target} names no file here`)
      else if (anchor && !headings(linkedText).has(anchor)) problems.push(`${from}: link to ${target} names no heading`)
    }
  }
  return problems
}

const readme = readFileSync(`${ROOT}/README.md`, "utf8")
const pages = new Map(
  readdirSync(`${ROOT}/docs`)
    .filter((name) => name.endsWith(".md"))
    .map((name) => [`docs/${name}`, readFileSync(`${ROOT}/docs/${name}`, "utf8")] as [string, string]),
)

describe("README and docs/", () => {
  test("the README is at most 300 lines, links every page, and every link lands", () => {
    expect(pages.size).toBeGreaterThanOrEqual(9)
    expect(docsProblems(readme, pages)).toEqual([])
  })

  test("control: a page nobody links, a link to a missing page and to a missing heading are each named", () => {
    const planted = new Map([...pages, ["docs/orphan.md", "# Orphan\n"]])
    const broken = `${readme}\n[gone](docs/gone.md) [nowhere](docs/tools.md#no-such-heading)\n`
    expect(docsProblems(broken, planted)).toEqual([
      "docs/orphan.md is not linked from README.md",
      "README.md: link to docs/gone.md names no file here",
      "README.md: link to docs/tools.md#no-such-heading names no heading",
    ])
    expect(docsProblems(`${"line\n".repeat(301)}`, new Map())).toEqual(["README.md has 301 lines, over 300"])
  })
})
