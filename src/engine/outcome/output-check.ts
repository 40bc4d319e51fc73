// A final answer checked against an output_schema off the request loop (DESIGN decision 16): model-json.ts
// does the work in a worker thread, under a time budget after which the worker is terminated and the
// answer counts as unchecked. The parse is linear and depth-bounded, but a schema's `pattern` runs the
// parent's regular expression on strings the model chose, and ajv's `uniqueItems` compares items
// pairwise: only a thread that can be stopped bounds those, and the MCP process keeps answering meanwhile.
import { type OutputCheck, type OutputSchema, overSize } from "./model-json"

/** How long one check may run before its worker is terminated. A valid 1 MiB answer takes well under 1 s. */
export const OUTPUT_CHECK_BUDGET_MS = 10_000

/**
 * What checks are doing, for whoever watches the process (tests, diagnostics): "started" when a worker
 * has the answer and began, "ended" when its check is over (answered, failed or terminated).
 */
export const outputChecks = new EventTarget()

type WorkerMessage = { kind: "started" } | { kind: "checked"; check: OutputCheck }

// In the compiled binary every module's import.meta.url is the binary's own (file:///$bunfs/root/…), and
// the worker is an entry point embedded under its path below src/ (scripts/build.ts names it).
const workerUrl = () =>
  import.meta.url.startsWith("file:///$bunfs/")
    ? "./engine/outcome/output-check-worker.ts"
    : new URL("./output-check-worker.ts", import.meta.url).href

/** The answer's JSON value checked against the schema in a worker; never rejects, never outlives the budget. */
export function checkOutput(
  schema: OutputSchema,
  text: string,
  options: { budgetMs?: number } = {},
): Promise<OutputCheck> {
  // Refused here before it is copied to a thread: the bound is on characters, known without reading them.
  const oversize = overSize(text)
  if (oversize) return Promise.resolve(oversize)
  const budgetMs = options.budgetMs ?? OUTPUT_CHECK_BUDGET_MS
  return new Promise((resolve) => {
    let worker: Worker
    try {
      worker = new Worker(workerUrl())
    } catch (error) {
      resolve({ ok: false, message: `the answer could not be checked: ${(error as Error).message}` })
      return
    }
    let done = false
    const finish = (check: OutputCheck) => {
      if (done) return
      done = true
      clearTimeout(timer)
      worker.terminate()
      outputChecks.dispatchEvent(new Event("ended"))
      resolve(check)
    }
    const timer = setTimeout(
      () =>
        finish({
          ok: false,
          message:
            `checking the answer against output_schema took over ${budgetMs / 1000} s and was stopped ` +
            "(a schema pattern backtracking on a string the answer holds?); the answer is unchecked.",
        }),
      budgetMs,
    )
    worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
      if (event.data.kind === "started") outputChecks.dispatchEvent(new Event("started"))
      else finish(event.data.check)
    }
    worker.onerror = (event) => finish({ ok: false, message: `the answer could not be checked: ${event.message}` })
    worker.postMessage({ schema, text })
  })
}
