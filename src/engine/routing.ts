// Routing with fallback: a role config.json gives an ordered list of models moves to the next one when
// the provider refuses the current one before the agent did anything (a spent quota or billing, refused
// credentials, a model it does not serve). Pure: the failure, what the turn did and the routes left in,
// the move (or none) out. A model the parent named is never replaced (resolveRoute gives it no fallbacks),
// and a turn that ran a step never moves: the agent may have acted.
import { z } from "zod"
import { formatModel, type ModelRoute } from "../opencode/session"
import { classifyFailure, type Failure } from "./failure"
import type { FailureKind } from "./failure-kinds"
import type { Spend } from "./usage"

/** The kinds another route can fix: this account or this model is refused, not the brief or the moment. */
const ROUTE_REFUSALS: readonly FailureKind[] = ["quota", "auth", "model_not_found"]

const count = z.number().finite().min(0)

/** A route the task left: which model, why (in words and as a kind), and what it spent there. */
export const FallbackSchema = z
  .object({
    model: z.string().min(1),
    why: z.string(),
    kind: z.string(),
    tokens: z.object({ input: count, output: count, reasoning: count, cacheRead: count, cacheWrite: count }).strict(),
    cost: count,
  })
  .strict()
export type Fallback = z.infer<typeof FallbackSchema>

export const RouteSchema = z
  .object({ providerID: z.string().min(1), modelID: z.string().min(1), variant: z.string().optional() })
  .strict()

/** The kind of an OpenCode retry message that another route would fix, else undefined. */
export function refusalOf(message: string): FailureKind | undefined {
  const kind = classifyFailure({ status: "failed", text: message })?.kind
  return kind && ROUTE_REFUSALS.includes(kind) ? kind : undefined
}

export interface MoveFacts {
  failure: Failure | undefined
  /** The turn ran a step, a tool or wrote text: the agent may have acted, so nothing moves. */
  acted: boolean
  /** The routes config.json lists after the current one, not yet tried. */
  fallbacks: readonly ModelRoute[] | undefined
  current: ModelRoute | undefined
}

export interface Move {
  from: string
  to: ModelRoute
  rest: ModelRoute[]
  kind: FailureKind
  /** What the parent and the progress read: "model a/x refused (quota): trying b/y". */
  line: string
}

/** The next route to try, or undefined when the turn's ending stands. */
export function nextRoute(facts: MoveFacts): Move | undefined {
  const { failure, fallbacks, current } = facts
  if (facts.acted || !current || !fallbacks?.length || !failure || !ROUTE_REFUSALS.includes(failure.kind))
    return undefined
  const [to, ...rest] = fallbacks as [ModelRoute, ...ModelRoute[]]
  const from = formatModel(current)
  return {
    from,
    to,
    rest,
    kind: failure.kind,
    line: `model ${from} refused (${failure.kind}): trying ${formatModel(to)}`,
  }
}

/** What the route that answered spent: the task's total less what the routes it left spent (the ledger's share). */
export function answeredSpend(total: Spend, fallbacks: readonly Fallback[] | undefined): Spend {
  const answered: Spend = { tokens: { ...total.tokens }, cost: total.cost }
  for (const fallback of fallbacks ?? []) {
    for (const key of Object.keys(answered.tokens) as (keyof Spend["tokens"])[])
      answered.tokens[key] = Math.max(0, answered.tokens[key] - fallback.tokens[key])
    answered.cost = Math.max(0, answered.cost - fallback.cost)
  }
  return answered
}
