// Doctor's report for a person (one line per check, the fix under each failure, the verdict last)
// or as JSON for machines (`--json`).
import type { DoctorReport } from "./run"

const MARK = { pass: "ok  ", fail: "FAIL", skip: "skip" } as const

export function formatReport(report: DoctorReport): string {
  const lines: string[] = []
  for (const check of report.checks) {
    lines.push(`${MARK[check.status]} ${check.id}: ${check.detail}`)
    if (check.status === "fail" && check.fix) lines.push(`     fix: ${check.fix}`)
  }
  const failures = report.checks.filter((c) => c.status === "fail").length
  if (failures) lines.push(`${failures} check${failures > 1 ? "s" : ""} failed.`)
  lines.push(report.verdict)
  return lines.join("\n")
}

export const formatJson = (report: DoctorReport) => JSON.stringify(report, null, 2)
