// Asks a session raised that no one will answer any more. OpenCode keeps a permission request or a
// question pending (and the session busy, its writer lock held) until someone replies; new asks reach
// us as events (policy.ts), but the ones already open when a process takes a task over do not, and a
// process leaving takes its relay with it. So a takeover answers the asks already pending by policy,
// and a closing server withdraws its own: each refused with the reason, which the agent reads
// (a question is answered with the reason as its text: OpenCode's reject carries no message).
//
// Listing is not enough on OpenCode 1.18.33: GET /permission answers 400 while a webfetch ask without
// a timeout argument is pending (its metadata.timeout is undefined). So every ask is also kept, by id,
// in its task's record from the moment it is raised until it is answered (OpenAsk), and answered from there.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { z } from "zod"
import type { Event } from "./client"

/** An ask raised and not yet answered: enough to answer it without OpenCode listing it. */
export interface OpenAsk {
  id: string
  kind: "permission" | "question"
  sessionID: string
  /** A question's number of questions (one answer each); a permission's name and patterns, for progress. */
  questions?: number
  what: string
}

const OpenAskSchema = z.object({
  id: z.string().min(1),
  kind: z.enum(["permission", "question"]),
  sessionID: z.string().min(1),
  questions: z.number().int().min(1).max(100).optional(),
  what: z.string(),
})

/** The well-formed entries of a record's `asks`, whatever was written there (a bad entry is no ask). */
export function knownAsks(value: unknown): OpenAsk[] {
  if (!Array.isArray(value)) return []
  return value.flatMap((entry) => {
    const parsed = OpenAskSchema.safeParse(entry)
    return parsed.success ? [parsed.data] : []
  })
}

/** The ask an event raises, if it raises one. */
export function openAskOf(event: Event): OpenAsk | undefined {
  if (event.type === "permission.asked") {
    const { id, sessionID, permission, patterns } = event.properties
    return { id, kind: "permission", sessionID, what: `${permission} ${patterns.join(" ")}`.trimEnd() }
  }
  if (event.type === "question.asked") {
    const { id, sessionID, questions } = event.properties
    return {
      id,
      kind: "question",
      sessionID,
      questions: questions.length,
      what: questions.map((question) => question.question).join(" / "),
    }
  }
  return undefined
}

/** The asks OpenCode lists as pending in `directory`; none when it cannot list them. */
async function listed(client: OpencodeClient, directory: string): Promise<OpenAsk[]> {
  const [questions, permissions] = await Promise.all([
    // A list OpenCode cannot answer (the instance is gone) has nothing pending in it.
    client.question.list({ directory }).then(
      (answer) => answer.data ?? [],
      () => [],
    ),
    // As above.
    client.permission.list({ directory }).then(
      (answer) => answer.data ?? [],
      () => [],
    ),
  ])
  return [
    ...questions.map(
      (ask): OpenAsk => ({
        id: ask.id,
        kind: "question",
        sessionID: ask.sessionID,
        questions: ask.questions.length,
        what: ask.questions.map((q) => q.question).join(" / "),
      }),
    ),
    ...permissions.map(
      (ask): OpenAsk => ({
        id: ask.id,
        kind: "permission",
        sessionID: ask.sessionID,
        what: `${ask.permission} ${ask.patterns.join(" ")}`.trimEnd(),
      }),
    ),
  ]
}

export interface Withdrawn {
  ask: OpenAsk
  /** For the task's progress. */
  line: string
}

/**
 * Refuses every ask pending in the sessions `sessionIDs` (listed by OpenCode, or `known` from the
 * task's record), each with `reason`; the ones OpenCode took the reply for.
 */
export async function withdrawPending(
  client: OpencodeClient,
  directory: string,
  sessionIDs: readonly string[],
  reason: string,
  known: readonly OpenAsk[] = [],
): Promise<Withdrawn[]> {
  const ours = new Set(sessionIDs)
  if (ours.size === 0) return []
  const asks = new Map<string, OpenAsk>()
  for (const ask of [...(await listed(client, directory)), ...known])
    if (ours.has(ask.sessionID) && !asks.has(ask.id)) asks.set(ask.id, ask)
  const withdrawn: Withdrawn[] = []
  for (const ask of asks.values())
    if (await withdraw(client, directory, ask, reason))
      withdrawn.push({
        ask,
        line: `withdrew a ${ask.kind === "question" ? "question" : "permission request"} (${ask.what}): ${reason}`,
      })
  return withdrawn
}

/** True when OpenCode took the reply; an ask answered meanwhile (or its session gone) takes none. */
function withdraw(client: OpencodeClient, directory: string, ask: OpenAsk, reason: string): Promise<boolean> {
  const taken = (reply: { error?: unknown }) => reply.error === undefined
  // As above: a rejection means there was nothing left to answer.
  const dropped = () => false
  if (ask.kind === "permission") {
    const message = `Refused: ${reason}. Work within the tools your role allows, or report what you needed.`
    return client.permission.reply({ requestID: ask.id, directory, reply: "reject", message }).then(taken, dropped)
  }
  const answer = [
    `No one can answer this: ${reason}. Continue without an answer, and say in your report what you needed.`,
  ]
  return client.question
    .reply({ requestID: ask.id, directory, answers: Array.from({ length: ask.questions ?? 1 }, () => answer) })
    .then(taken, dropped)
}
