// Doctor as it runs: each check's lines the moment it finishes, and while a step is slow (the first
// `opencode models` after install fetches an npm package; a live delegation starts OpenCode) a line
// every few seconds naming what is being waited for, so a person never watches a silent terminal.
import type { CheckResult } from "./check"
import { formatCheck, formatJson, formatSummary } from "./report"
import { runDoctor, type DoctorDeps, type DoctorOptions, type DoctorReport } from "./run"

/** Under the 5 s a person should ever wait without a word. */
export const PROGRESS_EVERY_MS = 4000

export interface StreamOutput {
  /** The report's lines (stdout). */
  line(text: string): void
  /** Progress while waiting (stderr under --json, so stdout stays one JSON document). */
  progress(text: string): void
}

export async function streamDoctor(
  deps: DoctorDeps,
  options: DoctorOptions & { json: boolean },
  out: StreamOutput,
  everyMs = PROGRESS_EVERY_MS,
): Promise<DoctorReport> {
  let waitingFor = ""
  let since = Date.now()
  const ticker = setInterval(() => {
    if (waitingFor) out.progress(`     … waiting for ${waitingFor} (${Math.round((Date.now() - since) / 1000)} s)`)
  }, everyMs)
  try {
    const report = await runDoctor(deps, options, {
      started(what) {
        waitingFor = what
        since = Date.now()
      },
      finished(results: CheckResult[]) {
        waitingFor = ""
        if (!options.json) for (const line of results.flatMap(formatCheck)) out.line(line)
      },
    })
    if (options.json) out.line(formatJson(report))
    else for (const line of formatSummary(report)) out.line(line)
    return report
  } finally {
    clearInterval(ticker)
  }
}
