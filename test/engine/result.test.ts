// Bounded results: a long report is cut to fit the text block, head and tail kept, the other fields whole.
import { describe, expect, test } from "bun:test"
import { boundReport, fromTranscript, MIN_REPORT_BYTES, renderText } from "../../src/engine/outcome/result"
import type { DelegationResult } from "../../src/engine/records/record-schema"

const base = (report: string, extra: Partial<DelegationResult> = {}): DelegationResult => ({
  ...fromTranscript({
    role: "scout",
    workspace: "/srv/project",
    taskID: "task_abc",
    sessionID: "ses_1",
    durationMs: 1200,
    status: "succeeded",
  }),
  report,
  ...extra,
})
const size = (text: string) => Buffer.byteLength(text)

describe("boundReport", () => {
  test("a report that fits is returned as it is", () => {
    expect(boundReport(base("short answer"), 2048)).toBe("short answer")
  })

  test.each([
    ["ascii", "a"],
    ["multi-byte", "é€😀"],
  ])("a 50 KB %s report fits the limit with its head, its tail and the marker", (_, unit) => {
    const report = `HEAD ${unit.repeat(Math.ceil(50_000 / size(unit)))} TAIL`
    const result = base(report)
    const cut = boundReport(result, 2048)
    expect(size(renderText({ ...result, report: cut }))).toBeLessThanOrEqual(2048)
    expect(cut.startsWith("HEAD ")).toBe(true)
    expect(cut.endsWith(" TAIL")).toBe(true)
    expect(cut).toContain(`of ${size(report)} bytes cut`)
    expect(cut).toContain('session_output with task_id "task_abc"')
    expect(cut).not.toContain("\uFFFD")
    const cutBytes = Number(/\[… (\d+) of/.exec(cut)![1])
    const [head, tail] = cut.split(/\n\n\[…[^\]]*\]\n\n/)
    expect(size(head!) + cutBytes + size(tail!)).toBe(size(report))
  })

  test("the other fields are never cut: the report keeps its minimum even when they fill the limit", () => {
    const result = base("r".repeat(10_000), { warnings: ["w".repeat(3000)] })
    const cut = boundReport(result, 2048)
    expect(size(cut)).toBeLessThanOrEqual(MIN_REPORT_BYTES)
    expect(renderText({ ...result, report: cut })).toContain("w".repeat(3000))
  })
})
