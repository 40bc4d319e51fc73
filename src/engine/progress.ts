// Turns OpenCode events into short lines a person can read in a progress notification:
// "step 2", "grep TODO", "read src/app.ts", "edit src/app.ts", "retrying (rate limit), attempt 2".
import type { Event } from "../opencode/client"
import { toolTarget } from "../opencode/session"

export interface ProgressTracker {
  steps: number
  /** Call ids already announced, so a tool's pending → running → completed updates say it once. */
  seen: Set<string>
}

export const newTracker = (): ProgressTracker => ({ steps: 0, seen: new Set() })

export function describeEvent(event: Event, tracker: ProgressTracker): string | undefined {
  if (event.type === "message.part.updated") {
    const part = event.properties.part
    if (part.type === "step-start") return `step ${++tracker.steps}`
    if (part.type === "tool") {
      const key = `${part.callID}:${part.state.status === "completed" || part.state.status === "error" ? "done" : "start"}`
      if (tracker.seen.has(key)) return undefined
      tracker.seen.add(key)
      const target = toolTarget(part)
      if (part.state.status === "error") return `${part.tool} ${target} failed`.trim()
      if (part.state.status === "completed") return undefined
      return `${part.tool} ${target}`.trim()
    }
    return undefined
  }
  if (event.type === "session.status" && event.properties.status.type === "retry")
    return `retrying (${event.properties.status.message}), attempt ${event.properties.status.attempt}`
  if (event.type === "session.error") return "the model returned an error"
  return undefined
}
