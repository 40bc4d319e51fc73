// Doctor's report for a person (one line per check, the fix under each failure, the verdict last)
// or as JSON for machines (`--json`).
import type { CheckResult } from "./check"
import type { DoctorReport } from "./run"

const MARK = { pass: "ok  ", fail: "FAIL", skip: "skip" } as const

/** One check's lines: its mark, id and detail, and the fix under a failure. */
export function formatCheck(check: CheckResult): string[] {
  const lines = [`${MARK[check.status]} ${check.id}: ${check.detail}`]
  if (check.status === "fail" && check.fix) lines.push(`     fix: ${check.fix}`)
  return lines
}

/** What follows the checks: how many failed, then the verdict. */
export function formatSummary(report: DoctorReport): string[] {
  const failures = report.checks.filter((c) => c.status === "fail").length
  return [...(failures ? [`${failures} check${failures > 1 ? "s" : ""} failed.`] : []), report.verdict]
}

export function formatReport(report: DoctorReport): string {
  return [...report.checks.flatMap(formatCheck), ...formatSummary(report)].join("\n")
}

export const formatJson = (report: DoctorReport) => JSON.stringify(report, null, 2)
