// What a task has spent, across every session it used (reruns after a server loss, retries in a
// fresh session, takeovers after a restart, task_continue turns), and whether that is past the caps
// config.json sets (maxTokensPerTask, maxCostPerTask). One running total lives on the task record:
// the attempts already closed, plus the one in flight (its session, the message it started after,
// and the step-finish parts counted so far), so a process that takes the task over continues from it.
// Pure: the turn feeds it events and transcripts; the engine saves the record.
import { z } from "zod"
import type { Event } from "../../opencode/client"
import type { FinishedStep, Transcript } from "../../opencode/transcript"

export interface Caps {
  /** Tokens the provider processed for the task: input, output, reasoning and cache reads and writes. */
  tokens?: number
  /** Cost in the currency of OpenCode's model prices (USD for the built-in catalog). */
  cost?: number
}

const count = z.number().finite().min(0)
/** Tokens by kind; a record's result carries them as they are, its spending with no other key (strict). */
export const TokensSchema = z.object({
  input: count,
  output: count,
  reasoning: count,
  cacheRead: count,
  cacheWrite: count,
})
const SpendSchema = z.object({ tokens: TokensSchema.strict(), cost: count }).strict()

export const SpendingSchema = z
  .object({
    /** Closed attempts, summed. */
    spent: SpendSchema,
    /** The attempt in flight: what its events counted so far, in which session, after which message. */
    open: z
      .object({
        ...SpendSchema.shape,
        sessionID: z.string().min(1),
        after: z.string().min(1).optional(),
        /** Step-finish part ids already counted: an update of a part must not count twice. */
        steps: z.array(z.string()),
      })
      .strict()
      .optional(),
  })
  .strict()

export type Tokens = z.infer<typeof TokensSchema>
export type Spend = z.infer<typeof SpendSchema>
export type Spending = z.infer<typeof SpendingSchema>
export type Segment = NonNullable<Spending["open"]>

const noTokens = (): Tokens => ({ input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 })
const KEYS = Object.keys(noTokens()) as (keyof Tokens)[]

export const tokenTotal = (tokens: Tokens) => KEYS.reduce((sum, key) => sum + tokens[key], 0)

function add(into: Spend, more: Spend) {
  for (const key of KEYS) into.tokens[key] += more.tokens[key]
  into.cost += more.cost
}

const counted = (value: unknown) => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0)

/**
 * A task's spending, started from what an older record's result said when the record has none (its
 * numbers only: a result written wrong must not turn the sum into a string or NaN).
 */
export function spendingOf(record: {
  spending?: Spending
  result?: { tokens?: Partial<Tokens>; cost?: number }
}): Spending {
  if (!record.spending) {
    const tokens = noTokens()
    for (const key of KEYS) tokens[key] = counted(record.result?.tokens?.[key])
    record.spending = { spent: { tokens, cost: counted(record.result?.cost) } }
  }
  return record.spending
}

/** Everything spent: the closed attempts and the one in flight. */
export function totalOf(spending: Spending): Spend {
  const total = { tokens: { ...spending.spent.tokens }, cost: spending.spent.cost }
  if (spending.open) add(total, spending.open)
  return total
}

/** Starts counting a new attempt in `sessionID` after message `after`; an attempt still open is closed as counted. */
export function openSegment(spending: Spending, sessionID: string, after?: string) {
  closeSegment(spending)
  spending.open = { tokens: noTokens(), cost: 0, sessionID, after, steps: [] }
}

/** Adds a finished step to the attempt in flight, once per part; other events (or sessions) change nothing. */
export function addStep(spending: Spending, event: Event): boolean {
  if (event.type !== "message.part.updated") return false
  const part = event.properties.part
  if (part.type !== "step-finish" || part.sessionID !== spending.open?.sessionID) return false
  const { input, output, reasoning, cache } = part.tokens
  return countStep(spending.open, {
    id: part.id,
    tokens: { input, output, reasoning, cacheRead: cache.read, cacheWrite: cache.write },
    cost: part.cost,
  })
}

function countStep(open: Segment, step: FinishedStep): boolean {
  if (open.steps.includes(step.id)) return false
  open.steps.push(step.id)
  add(open, step)
  return true
}

/**
 * A taken-over attempt: the steps its session finished while nobody followed it (read from OpenCode)
 * are added to what the previous process counted, each step once.
 */
export function seedSegment(spending: Spending, steps: FinishedStep[]) {
  if (spending.open) for (const step of steps) countStep(spending.open, step)
}

/**
 * Closes the attempt in flight into the total. Its transcript, when one could be read, is OpenCode's
 * own account of it; the events counted are kept where they say more (a transcript cut short, or
 * none after a server loss). Both are lower bounds of the same spending, so the larger one is truer.
 */
export function closeSegment(spending: Spending, transcript?: Pick<Transcript, "tokens" | "cost">) {
  const open = spending.open
  if (!open) return
  spending.open = undefined
  const tokens = noTokens()
  for (const key of KEYS) tokens[key] = Math.max(open.tokens[key], transcript?.tokens[key] ?? 0)
  add(spending.spent, { tokens, cost: Math.max(open.cost, transcript?.cost ?? 0) })
}

/**
 * Closes an attempt that ended in `sessionID` with its transcript. A session the record never opened an
 * attempt for (the process died between creating it and saving that) is counted from its transcript.
 */
export function settleSegment(
  spending: Spending,
  sessionID: string | undefined,
  transcript?: Pick<Transcript, "tokens" | "cost">,
) {
  if (transcript && sessionID && spending.open?.sessionID !== sessionID) openSegment(spending, sessionID)
  closeSegment(spending, transcript)
}

/** The cap the task is past, in one line, or undefined while it is within every cap. */
export function overCap(spent: Spend, caps: Caps): string | undefined {
  const tokens = tokenTotal(spent.tokens)
  if (caps.tokens !== undefined && tokens > caps.tokens)
    return (
      `the task used ${tokens.toLocaleString("en-US")} tokens, past its cap of ` +
      `${caps.tokens.toLocaleString("en-US")} (maxTokensPerTask)`
    )
  if (caps.cost !== undefined && spent.cost > caps.cost)
    return `the task cost ${spent.cost.toFixed(4)}, past its cap of ${caps.cost} (maxCostPerTask)`
  return undefined
}

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
