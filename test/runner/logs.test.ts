// Runner logs: which runs retention removes (a table), and reading a log back in numbered slices and
// by search with the caps that keep a model's context small.
import { expect, test } from "bun:test"
import {
  createRun,
  eachLine,
  grepLog,
  LINE_MAX_CHARS,
  latestRunOf,
  listRuns,
  logPath,
  newRunId,
  pruneRuns,
  READ_LIMITS,
  readRun,
  readSlice,
  RUN_ID,
  runsToPrune,
  searchPattern,
} from "../../src/runner/logs"
import { tempDir } from "../helpers/temp"

const NOW = Date.parse("2026-06-01T12:00:00Z")
const at = (hoursAgo: number, id: string) => ({ id, startedAt: new Date(NOW - hoursAgo * 3_600_000).toISOString() })

test.each([
  ["nothing to do", [at(1, "a"), at(2, "b")], { hours: 24, count: 20 }, [], []],
  ["older than the age limit", [at(1, "a"), at(25, "b"), at(48, "c")], { hours: 24, count: 20 }, [], ["b", "c"]],
  ["past the count, oldest first", [at(3, "c"), at(1, "a"), at(2, "b")], { hours: 24, count: 2 }, [], ["c"]],
  ["both limits", [at(1, "a"), at(2, "b"), at(30, "c")], { hours: 24, count: 1 }, [], ["b", "c"]],
  ["the current run is kept even past the count", [at(1, "a"), at(2, "b")], { hours: 24, count: 1 }, ["b"], []],
  [
    "an unreadable start time counts as old",
    [{ id: "x", startedAt: "garbage" }, at(1, "a")],
    { hours: 24, count: 20 },
    [],
    ["x"],
  ],
] as const)("retention: %s", (_, runs, retention, keep, doomed) => {
  expect(runsToPrune(runs, retention, NOW, keep).sort()).toEqual([...doomed])
})

test("run ids are unique, sortable and validated before they touch a path", async () => {
  const id = newRunId(new Date("2026-01-02T03:04:05.678Z"))
  expect(id).toMatch(/^run-20260102T030405-[a-z0-9]{6}$/)
  expect(RUN_ID.test(id)).toBe(true)
  await using dir = await tempDir("oc-orch-runs-")
  expect(await readRun(dir.path, "../../etc")).toBeUndefined()
  expect(await readRun(dir.path, "run-20260102T030405-abcdef/../x")).toBeUndefined()
})

test("createRun, listRuns, latestRunOf and pruneRuns on disk", async () => {
  await using dir = await tempDir("oc-orch-runs-")
  const base = { agent: "a", profile: "runner-read_only-disabled", workspace: "/w", command: "true" }
  const first = await createRun(dir.path, { ...base, sessionID: "s1" })
  await Bun.sleep(5)
  const second = await createRun(dir.path, { ...base, sessionID: "s2" })
  await Bun.sleep(5)
  const third = await createRun(dir.path, { ...base, sessionID: "s1" })
  expect((await listRuns(dir.path)).map((r) => r.id).sort()).toEqual([first.id, second.id, third.id].sort())
  expect((await latestRunOf(dir.path, ["s1"]))?.id).toBe(third.id)
  expect(await latestRunOf(dir.path, ["nobody"])).toBeUndefined()
  expect(await pruneRuns(dir.path, { hours: 24, count: 1 }, [first.id])).toEqual([second.id])
  expect((await listRuns(dir.path)).map((r) => r.id).sort()).toEqual([first.id, third.id].sort())
})

test.each([
  ["null", "null"],
  ["an array", "[]"],
  ["{}", "{}"],
  [
    "a record answering for another run",
    JSON.stringify({ id: "run-20260102T030405-zzzzzz", sessionID: "s1", startedAt: "2026-01-02T03:04:05Z" }),
  ],
  ["a start time that is not a date", JSON.stringify({ id: "ID", sessionID: "s1", startedAt: "soon" })],
])(
  "a run record that is %s reads as absent; listing, the latest run and pruning answer for the others",
  async (_, content) => {
    await using dir = await tempDir("oc-orch-runs-")
    const good = await createRun(dir.path, {
      agent: "a",
      profile: "runner-read_only-disabled",
      workspace: "/w",
      command: "true",
      sessionID: "s1",
    })
    const bad = newRunId()
    await Bun.write(`${dir.path}/${bad}/run.json`, content.replace('"ID"', JSON.stringify(bad)))
    expect(await readRun(dir.path, bad)).toBeUndefined()
    expect((await listRuns(dir.path)).map((r) => r.id)).toEqual([good.id])
    expect((await latestRunOf(dir.path, ["s1"]))?.id).toBe(good.id)
    expect(await pruneRuns(dir.path, { hours: 24, count: 20 })).toEqual([])
    // Control: the same record made whole reads.
    await Bun.write(
      `${dir.path}/${bad}/run.json`,
      JSON.stringify({ id: bad, sessionID: "s2", startedAt: new Date().toISOString() }),
    )
    expect((await readRun(dir.path, bad))?.id).toBe(bad)
  },
)

test("readSlice numbers lines, stops at its limits and says where the log ends", async () => {
  await using dir = await tempDir("oc-orch-runs-")
  const file = `${dir.path}/log`
  await Bun.write(file, `${Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join("\n")}\n`)
  expect(await readSlice(file, 10, 3)).toBe("10: line 10\n11: line 11\n12: line 12\n[more from line 13]")
  expect(await readSlice(file, 499, 50)).toBe("499: line 499\n500: line 500\n[end of log, 500 lines]")
  expect(await readSlice(file, 900, 5)).toBe("no lines from 900: the log has 500 lines.")
  expect((await readSlice(file, 1, 10_000)).split("\n").length).toBe(READ_LIMITS.lines + 1)
  await Bun.write(file, `${"z".repeat(2000)}\nshort`)
  expect(await readSlice(file, 1, 1)).toBe(`1: ${"z".repeat(READ_LIMITS.lineChars)}… [2000 chars]\n[more from line 2]`)
})

test("grepLog finds lines by regex or literal text, case-insensitively, with a cap", async () => {
  await using dir = await tempDir("oc-orch-runs-")
  const file = `${dir.path}/log`
  await Bun.write(file, ["ok", "FAIL: parser (a+b)", "ok", "fail: cache"].join("\n"))
  expect(await grepLog(file, "fail: \\w+")).toBe(
    "2 of 4 lines match /fail: \\w+/i:\n2: FAIL: parser (a+b)\n4: fail: cache",
  )
  expect(await grepLog(file, "(a+b")).toContain("2: FAIL: parser (a+b)")
  expect(await grepLog(file, "nothing")).toBe("no line of 4 matches /nothing/i.")
  expect(() => searchPattern("")).toThrow("empty")
  await Bun.write(file, Array.from({ length: 100 }, () => "hit").join("\n"))
  expect(await grepLog(file, "hit")).toStartWith(`100 of 100 lines match /hit/i (first ${READ_LIMITS.matches} shown):`)
})

test("the log path sits in the run's own directory", () => {
  expect(logPath("/state/runs", "run-20260102T030405-abcdef")).toBe("/state/runs/run-20260102T030405-abcdef/output.log")
})

test("grepLog never runs a model's pattern on the JS engine over the log (control: a JS search does, once a line)", async () => {
  await using dir = await tempDir("oc-orch-runs-")
  const file = `${dir.path}/log`
  // JSC backtracks on (a+)+$ over these letters for seconds (24 letters ~170 ms, each one more doubles it),
  // on the OpenCode server's event loop: the search belongs to ripgrep, whose engine is linear.
  const lines = [`${"a".repeat(40)}!`, "error failed ".repeat(4000), "x"]
  await Bun.write(file, `${lines.join("\n")}\n`)
  const catastrophic = "(a+)+$"
  const inProcess = await regexRunsOf(catastrophic, async () => {
    expect(await grepLog(file, catastrophic)).toBe("no line of 3 matches /(a+)+$/i.")
    expect(await grepLog(file, "error.*failed.*\\d+ tests")).toBe("no line of 3 matches /error.*failed.*\\d+ tests/i.")
  })
  expect(inProcess).toBe(0)
  // Control: the same search done with the JS engine runs the pattern on every line, the catastrophic one included.
  const control = await regexRunsOf(catastrophic, async () => {
    const re = searchPattern(catastrophic)
    return lines.filter((line) => re.test(line.slice(0, 24)))
  })
  expect(control).toBe(lines.length)
})

/** How many times a regular expression with `source` ran in this process while `work` ran. */
async function regexRunsOf(source: string, work: () => Promise<unknown>): Promise<number> {
  let runs = 0
  // RegExp test calls exec itself: one run counted once.
  let inside = false
  const proto = RegExp.prototype
  const originals = { test: proto.test, exec: proto.exec }
  const counted = <T>(original: (this: RegExp, input: string) => T) =>
    function (this: RegExp, input: string): T {
      if (inside) return original.call(this, input)
      if (this.source === source) runs++
      inside = true
      try {
        return original.call(this, input)
      } finally {
        inside = false
      }
    }
  proto.test = counted(originals.test)
  proto.exec = counted(originals.exec)
  try {
    await work()
  } finally {
    proto.test = originals.test
    proto.exec = originals.exec
  }
  return runs
}

test("a log that is one 200 MB line: the reader holds at most the line bound, and counts the whole line", async () => {
  await using dir = await tempDir("oc-orch-logs-")
  const file = `${dir.path}/output.log`
  const writer = Bun.file(file).writer()
  const block = "a".repeat(1_000_000)
  for (let i = 0; i < 200; i++) writer.write(block)
  writer.write("\nlast line\n")
  await writer.end()
  const seen: [number, number][] = []
  expect(await eachLine(file, (line, _, chars) => void seen.push([line.length, chars]))).toBe(2)
  expect(seen).toEqual([
    [LINE_MAX_CHARS, 200_000_000],
    [9, 9],
  ])
  // readSlice says how long the line was, not how much of it the reader held.
  expect(await readSlice(file, 1, 1)).toContain("… [200000000 chars]")
}, 60_000)

test("control: without the line bound the reader hands over (and holds) the whole line", async () => {
  await using dir = await tempDir("oc-orch-logs-")
  const file = `${dir.path}/output.log`
  await Bun.write(file, `${"a".repeat(20_000_000)}\n`)
  const lengths: number[] = []
  await eachLine(file, (line) => void lengths.push(line.length), { maxChars: Number.POSITIVE_INFINITY })
  expect(lengths).toEqual([20_000_000])
}, 60_000)
