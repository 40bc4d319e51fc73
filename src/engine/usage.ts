// What a task has spent so far, counted from the step-finish parts its session's events carry, and
// whether that is past the caps config.json sets (maxTokensPerTask, maxCostPerTask). Pure: the turn
// feeds it events and stops the session when `overCap` names a cap.
import type { Event } from "../opencode/client"

export interface Caps {
  /** Tokens the provider processed for the task: input, output, reasoning and cache reads and writes. */
  tokens?: number
  /** Cost in the currency of OpenCode's model prices (USD for the built-in catalog). */
  cost?: number
}

export interface Usage {
  tokens: number
  cost: number
  /** Step-finish part ids already counted: an update of a part must not count twice. */
  counted: Set<string>
}

export const newUsage = (): Usage => ({ tokens: 0, cost: 0, counted: new Set() })

/** Adds a finished step's tokens and cost, once per part; other events change nothing. */
export function addStep(usage: Usage, event: Event) {
  if (event.type !== "message.part.updated") return
  const part = event.properties.part
  if (part.type !== "step-finish" || usage.counted.has(part.id)) return
  usage.counted.add(part.id)
  const { input, output, reasoning, cache } = part.tokens
  usage.tokens += input + output + reasoning + cache.read + cache.write
  usage.cost += part.cost
}

/** The cap the task is past, in one line, or undefined while it is within every cap. */
export function overCap(usage: Usage, caps: Caps): string | undefined {
  if (caps.tokens !== undefined && usage.tokens > caps.tokens)
    return `the task used ${usage.tokens.toLocaleString("en-US")} tokens, past its cap of ${caps.tokens.toLocaleString("en-US")} (maxTokensPerTask)`
  if (caps.cost !== undefined && usage.cost > caps.cost) return `the task cost ${usage.cost.toFixed(4)}, past its cap of ${caps.cost} (maxCostPerTask)`
  return undefined
}
