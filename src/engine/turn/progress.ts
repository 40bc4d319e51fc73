// Turns OpenCode events into short lines a person can read in a progress notification:
// "step 2", "grep TODO", "read src/app.ts", "edit src/app.ts", "edited src/app.ts",
// "retrying (rate limit), attempt 2".
import type { Event } from "../../opencode/client"
import { toolTarget } from "../../opencode/transcript"
import type { Activity } from "../records"

export interface ProgressTracker {
  steps: number
  /** Call ids already announced, so a tool's pending → running → completed updates say it once. */
  seen: Set<string>
  /** The latest tool call announced, and what it worked on. */
  tool?: string
  target?: string
}

export const activityOf = (tracker: ProgressTracker, at: Date): Activity => ({
  step: tracker.steps,
  tool: tracker.tool,
  target: tracker.target,
  at: at.toISOString(),
})

/** Tools whose completion means a file in the workspace changed. */
const EDIT_TOOLS = new Set(["edit", "write", "patch", "multiedit", "apply_patch"])

export const newTracker = (): ProgressTracker => ({ steps: 0, seen: new Set() })

export function describeEvent(event: Event, tracker: ProgressTracker): string | undefined {
  if (event.type === "message.part.updated") {
    const part = event.properties.part
    if (part.type === "step-start") return `step ${++tracker.steps}`
    if (part.type === "tool") {
      // A pending call has no input yet; announce it once it runs (or ends), when its target is known.
      if (part.state.status === "pending") return undefined
      const ended = part.state.status === "completed" || part.state.status === "error"
      const key = `${part.callID}:${ended ? "done" : "start"}`
      if (tracker.seen.has(key)) return undefined
      tracker.seen.add(key)
      const target = toolTarget(part)
      tracker.tool = part.tool
      tracker.target = target || undefined
      if (part.state.status === "error") return `${part.tool} ${target} failed`.trim()
      if (part.state.status === "completed") {
        if (EDIT_TOOLS.has(part.tool)) return `edited ${target}`.trim()
        // A call that finished before we saw it running still gets its line.
        if (tracker.seen.has(`${part.callID}:start`)) return undefined
        tracker.seen.add(`${part.callID}:start`)
      }
      return `${part.tool} ${target}`.trim()
    }
    return undefined
  }
  if (event.type === "session.status" && event.properties.status.type === "retry")
    return `retrying (${event.properties.status.message}), attempt ${event.properties.status.attempt}`
  if (event.type === "session.error") return "the model returned an error"
  return undefined
}
