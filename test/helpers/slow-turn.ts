// A script for a task that is still running when its call returns: the agent's first step (a glob)
// comes at once, so the task has a session and progress, and its report only after a delay.
import type { ScriptInput } from "../../src/model/script"

/** One turn: a glob of the Markdown files, then `report` after `delayMs`. */
export const slowTurn = (report: string, delayMs: number): ScriptInput => ({
  turns: [
    {
      steps: [
        { tool: "glob", args: { pattern: "*.md" } },
        { text: report, delayMs },
      ],
    },
  ],
})
