// The script of a task that is still running when a test looks at it: the restart, cancel and
// held-workspace tests need one that has started its session yet cannot finish before they act.
import type { ScriptInput } from "../../src/model/script"

/** One tool call, then a report only after 120 s: the task stays running until cancelled or killed. */
export const LONG_TASK: ScriptInput = {
  turns: [
    {
      steps: [
        { tool: "glob", args: { pattern: "*.md" } },
        { text: "too late", delayMs: 120_000 },
      ],
    },
  ],
}
