// Routing with fallback: a role config.json gives an ordered list of models moves to the next one when
// the provider refuses the current one before the agent did anything (a spent quota or billing, refused
// credentials, a model it does not serve). Pure: the failure, what the turn did and the routes left in,
// the move (or none) out. A model the parent named is never replaced (resolveRoute gives it no fallbacks),
// and a turn that ran a step never moves: the agent may have acted.
import { formatModel, type ModelRoute } from "../../opencode/session"
import { classifyFailure, type Failure } from "./failure"
import type { FailureKind } from "../records"

/** The kinds another route can fix: this account or this model is refused, not the brief or the moment. */
const ROUTE_REFUSALS: readonly FailureKind[] = ["quota", "auth", "model_not_found"]

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
