// Asks a session raised that no one will answer any more. OpenCode keeps a permission request or a
// question pending (and the session busy, its writer lock held) until someone replies; new asks reach
// us as events (policy.ts), but the ones already open when a process takes a task over do not, and a
// process leaving takes its relay with it. So a takeover answers the asks already pending by policy,
// and a closing server withdraws its own: each refused with the reason, which the agent reads
// (a question is answered with the reason as its text: OpenCode's reject carries no message).
import type { OpencodeClient } from "@opencode-ai/sdk/v2"

/** What was withdrawn, one line each, for the task's progress. */
export async function withdrawPending(client: OpencodeClient, directory: string, sessionIDs: readonly string[], reason: string): Promise<string[]> {
  const ours = new Set(sessionIDs)
  if (ours.size === 0) return []
  const [questions, permissions] = await Promise.all([
    client.question.list({ directory }).then(
      (listed) => listed.data ?? [],
      () => [],
    ),
    client.permission.list({ directory }).then(
      (listed) => listed.data ?? [],
      () => [],
    ),
  ])
  const lines: string[] = []
  // Each reply drops its error: an ask answered meanwhile (by an event, or its session gone) needs none.
  for (const question of questions.filter((ask) => ours.has(ask.sessionID))) {
    const answer = [`No one can answer this: ${reason}. Continue without an answer, and say in your report what you needed.`]
    const replied = await client.question.reply({ requestID: question.id, directory, answers: question.questions.map(() => answer) }).then(
      (reply) => reply.error === undefined,
      () => false,
    )
    if (replied) lines.push(`withdrew a question (${question.questions.map((q) => q.question).join(" / ")}): ${reason}`)
  }
  for (const permission of permissions.filter((ask) => ours.has(ask.sessionID))) {
    const message = `Refused: ${reason}. Work within the tools your role allows, or report what you needed.`
    const replied = await client.permission.reply({ requestID: permission.id, directory, reply: "reject", message }).then(
      (reply) => reply.error === undefined,
      () => false,
    )
    if (replied) lines.push(`withdrew a permission request (${`${permission.permission} ${permission.patterns.join(" ")}`.trimEnd()}): ${reason}`)
  }
  return lines
}
