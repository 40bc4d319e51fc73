// Headless sessions must never wait for a person: every permission request from a delegated
// session is rejected (the agent's own rules already allow what its role may do) and every
// question is dismissed. OpenCode 1.18 never calls a plugin's `permission.ask`, so this is answered
// over the API from the event stream.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import type { Event } from "./client"

export type Answered = { kind: "permission"; permission: string; patterns: string[] } | { kind: "question" }

export async function answerAsk(client: OpencodeClient, directory: string, event: Event): Promise<Answered | undefined> {
  if (event.type === "permission.asked") {
    await client.permission
      .reply({
        requestID: event.properties.id,
        directory,
        reply: "reject",
        message: "Delegated sessions run unattended: this was refused by policy. Work within the tools your role allows, or report what you needed.",
      })
      // A request already answered (or its session gone) needs no answer; the run cannot hang on it.
      .catch(() => undefined)
    return { kind: "permission", permission: event.properties.permission, patterns: event.properties.patterns }
  }
  if (event.type === "question.asked") {
    // As above: nothing waits on a question that is already gone.
    await client.question.reject({ requestID: event.properties.id, directory }).catch(() => undefined)
    return { kind: "question" }
  }
  return undefined
}
