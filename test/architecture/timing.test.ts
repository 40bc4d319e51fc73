// No test bounds an elapsed time from above: on a loaded machine any such bound fails while the
// behaviour it stood for holds (a 64 MB digest once failed at 541 ms against 250). What a test pins
// instead is an order of events (the cancel's answer before the session's natural end), a count of work
// (twice the input, twice the characters handled), or an end reached at all with a deadline that only
// stops the wait; timing itself is measured in scripts/bench.ts as ratios. A lower bound ("the deadline
// did not fire early") is left alone: a slower machine only meets it more easily.
import { describe, expect, test } from "bun:test"
import { Glob } from "bun"
import { elapsedBounds } from "./_timing"

const ROOT = `${import.meta.dir}/../..`

describe("the detector", () => {
  test.each([
    ["a clock difference", "const t = performance.now()\nwork()\nexpect(performance.now() - t).toBeLessThan(250)\n"],
    ["Date.now", "const t = Date.now()\nexpect(Date.now() - t).toBeLessThanOrEqual(BOUND_MS)\n"],
    ["a variable from one", "const t = Date.now()\nconst spent = Date.now() - t\nexpect(spent).toBeLessThan(5_000)\n"],
    ["a named duration", "const x = 1\nexpect(result.durationMs).toBeLessThan(SLOW_MS / 2)\n"],
    ["elapsed, written the other way", "const x = 1\nexpect(10_000).toBeGreaterThan(elapsed)\n"],
    ["over lines", "const t = 1\nexpect(\n  took,\n).toBeLessThan(\n  2000,\n)\n"],
  ])("control: %s compared with a constant is found", (_, source) => {
    expect(elapsedBounds(source).length).toBe(1)
  })

  test.each([
    ["an order of events", "expect(cancelled.status).toBe('cancelled')\nexpect(at(a)).toBeLessThan(at(b))\n"],
    ["a count of work", "expect(ratio).toBeLessThan(8 * 1.1)\nexpect(digest.length).toBeLessThan(2100)\n"],
    ["an end reached before a deadline that stops the wait", "expect((await arrives(p, 60_000)).arrived).toBe(true)\n"],
    ["a lower bound", "const t = Date.now()\nexpect(Date.now() - t).toBeGreaterThanOrEqual(600)\n"],
    [
      "the same in a string or comment",
      "// expect(elapsed).toBeLessThan(1)\nconst s = 'expect(took).toBeLessThan(1)'\n",
    ],
    [
      "two durations compared",
      "expect(Math.abs(a.durationMs - b.durationMs)).toBeLessThanOrEqual(b.durationMs / 100 + 1)\n",
    ],
  ])("%s is not", (_, source) => {
    expect(elapsedBounds(source)).toEqual([])
  })
})

test("no test in test/ bounds an elapsed time by a constant", async () => {
  const found: string[] = []
  for await (const file of new Glob("test/**/*.ts").scan({ cwd: ROOT })) {
    const source = await Bun.file(`${ROOT}/${file}`).text()
    for (const line of elapsedBounds(source)) found.push(`${file}:${line}`)
  }
  expect(found).toEqual([])
})
