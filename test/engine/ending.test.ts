// How a turn ends, decided before any effect (ending-decision.ts): the status, the error line and its kind, the
// next step, and what becomes of the session and the writer state, row by row: each status a turn can
// end in, each reason recovery forces, each disposal a writer's workspace goes through.
import { describe, expect, test } from "bun:test"
import { decideEnding, type EndingFacts } from "../../src/engine/outcome/ending-decision"
import type { Status } from "../../src/engine/records/status"
import type { SessionError } from "../../src/opencode/session"
import type { Transcript } from "../../src/opencode/transcript"
import fixtures from "./fixtures/provider-errors.json"

const transcript = (text: string, error?: string, fault?: SessionError): Transcript => ({
  text,
  steps: 1,
  finished: [],
  tokens: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  cost: 0,
  tools: [],
  messages: 2,
  bytes: 10,
  error,
  fault,
})
/** What OpenCode sent when the scripted model answered 429 and 401 (captured, see failure.test.ts). */
const rateLimited = fixtures.captured["429"].sessionError as unknown as SessionError
const unauthorized = fixtures.captured["401"].sessionError as unknown as SessionError

// A read-only task whose session exists, OpenCode reachable, nothing preserved, lost or late.
const reader: EndingFacts = {
  outcome: { kind: "idle" },
  transcript: transcript("the report"),
  writable: false,
  preserveSessions: false,
  reachable: true,
  sessionID: "ses_1",
  late: false,
}
const writer: EndingFacts = { ...reader, writable: true }
const RETRY_LINE = "retrying (Connection reset by server), attempt 4"

describe("the status, the error and its kind", () => {
  test.each<[string, Partial<EndingFacts>, Status, string | undefined, string | undefined]>([
    ["an idle session with a report succeeded", {}, "succeeded", undefined, undefined],
    [
      "an idle session without a report needs review",
      { transcript: transcript("") },
      "needs_review",
      undefined,
      undefined,
    ],
    ["no transcript at all needs review", { transcript: undefined }, "needs_review", undefined, undefined],
    [
      "a failing session failed, with its message",
      { outcome: { kind: "error", message: "boom" } },
      "failed",
      "boom",
      "unknown",
    ],
    [
      "a provider's 429 is a rate limit",
      { outcome: { kind: "error", message: "APIError (HTTP 429)", error: rateLimited } },
      "failed",
      "APIError (HTTP 429)",
      "rate_limit",
    ],
    [
      "the transcript's own error and fault, when the session went idle",
      { transcript: transcript("", "APIError: Incorrect API key", unauthorized) },
      "failed",
      "APIError: Incorrect API key",
      "auth",
    ],
    ["a cancel from this process", { outcome: { kind: "aborted" } }, "cancelled", undefined, "cancelled"],
    [
      "a cancel from elsewhere (another process, the TUI)",
      { transcript: transcript("", "MessageAbortedError: aborted") },
      "cancelled",
      "MessageAbortedError: aborted",
      "cancelled",
    ],
    ["the deadline", { outcome: { kind: "deadline" }, lastProgress: "bash ls" }, "timed_out", undefined, "timeout"],
    [
      "the deadline while OpenCode retried a failing provider says so",
      { outcome: { kind: "deadline" }, transcript: undefined, lastProgress: RETRY_LINE },
      "timed_out",
      `The deadline passed while OpenCode was ${RETRY_LINE}: the provider kept failing.`,
      "network",
    ],
    [
      "a retry line read only at a deadline",
      { outcome: { kind: "error", message: "boom" }, lastProgress: RETRY_LINE },
      "failed",
      "boom",
      "unknown",
    ],
    [
      "a cap passed stops even a turn with a report",
      { overBudget: "maxTokensPerTask (100) reached" },
      "failed",
      "Stopped: maxTokensPerTask (100) reached.",
      "budget",
    ],
    [
      "a lost server, whatever the transcript said",
      { outcome: { kind: "lost" }, transcript: transcript("half a report", "boom") },
      "failed",
      "server_lost: the shared OpenCode server stopped while the task ran; nothing runs for it any more.",
      "server_lost",
    ],
  ])("%s", (_, facts, status, error, kind) => {
    const ending = decideEnding({ ...reader, ...facts })
    expect(ending.status).toBe(status)
    expect(ending.error).toBe(error)
    expect(ending.failure?.errorKind).toBe(kind as never)
    if (kind) expect(ending.failure?.advice).toBeTruthy()
  })

  test("a 429's retry-after reaches the result and the next step", () => {
    const ending = decideEnding({ ...reader, outcome: { kind: "error", message: "429", error: rateLimited } })
    expect(ending.failure?.retryAfterS).toBe(2)
    expect(ending.next).toContain("Wait 2 s")
  })

  test.each<[string, Partial<EndingFacts>]>([
    ["a timeout", { outcome: { kind: "deadline" } }],
    ["a cancel", { outcome: { kind: "aborted" } }],
  ])("%s leaves the next step to its status (it names the task's budget and edits)", (_, facts) => {
    expect(decideEnding({ ...reader, ...facts }).next).toBeUndefined()
  })

  test("a success and a report-less end have no failure and no next step here", () => {
    for (const facts of [reader, { ...reader, transcript: transcript("") }]) {
      const ending = decideEnding(facts)
      expect(ending.failure).toBeUndefined()
      expect(ending.next).toBeUndefined()
    }
  })

  test("a lost server tells a writer its edits are kept, a reader that it was retried", () => {
    const lost = { outcome: { kind: "lost" as const } }
    expect(decideEnding({ ...writer, ...lost }).next).toStartWith("Edits made before the server stopped are kept")
    expect(decideEnding({ ...reader, ...lost }).next).toStartWith("Retried once on a new server")
  })
})

describe("an ending recovery forces", () => {
  const notes = [
    "The MCP server stopped while session ses_1 ran, and it ended without a report.",
    "The MCP server stopped while this task ran; its session ses_1 no longer exists.",
    "The MCP server stopped before the task's session started.",
  ]
  test.each(notes)("interrupted wins over what the turn says: %s", (note) => {
    for (const outcome of [{ kind: "idle" }, { kind: "aborted" }, { kind: "deadline" }] as const) {
      const ending = decideEnding({ ...reader, outcome, forced: { status: "interrupted", note } })
      expect(ending.status).toBe("interrupted")
      expect(ending.failure).toBeUndefined()
    }
  })

  test("the forced status, not the turn's, names the session's hold", () => {
    const forced = { status: "interrupted" as const, note: notes[0]! }
    const ending = decideEnding({ ...writer, reachable: false, forced })
    expect(ending.hold?.extra.reason).toBe("OpenCode could not be reached to remove session ses_1")
    expect(decideEnding({ ...writer, forced }).unremoved?.hold.extra.reason).toContain("(interrupted)")
  })

  test("a forced failure is classified like a turn's", () => {
    const ending = decideEnding({ ...reader, forced: { status: "cancelled", note: "stopped" } })
    expect(ending.status).toBe("cancelled")
    expect(ending.failure?.errorKind).toBe("cancelled")
  })
})

describe("what becomes of the session and the writer state", () => {
  test.each<[string, EndingFacts, string, object | undefined]>([
    ["a reader keeps its session for task_continue", reader, "keep", undefined],
    ["a writer's session is parked, the workspace released once it is removed", writer, "park", undefined],
    [
      "a preserved session keeps the writer state, with the session and the status",
      { ...writer, preserveSessions: true },
      "preserve",
      { state: "preserved", extra: { sessionID: "ses_1", reason: "session ses_1 kept for diagnosis (succeeded)" } },
    ],
    [
      "a session OpenCode cannot be reached to remove is quarantined",
      { ...writer, reachable: false },
      "quarantine",
      {
        state: "quarantined",
        extra: { sessionID: "ses_1", reason: "OpenCode could not be reached to remove session ses_1" },
      },
    ],
    [
      "a creation in flight quarantines without a session id (the held one's stays)",
      { ...writer, sessionID: undefined, late: true, outcome: { kind: "deadline" } },
      "late",
      {
        state: "quarantined",
        extra: {
          reason:
            "the task ended (timed_out) while OpenCode was still creating its session; " +
            "released once that session is removed",
        },
      },
    ],
    ["no session: nothing to hold", { ...writer, sessionID: undefined }, "none", undefined],
    [
      "a lost server frees the workspace even with sessions preserved",
      { ...writer, outcome: { kind: "lost" }, preserveSessions: true },
      "gone",
      undefined,
    ],
  ])("%s", (_, facts, disposal, hold) => {
    const ending = decideEnding(facts)
    expect(ending.disposal).toBe(disposal as never)
    expect(ending.hold).toEqual(hold as never)
    if (hold) expect(Object.keys(ending.hold!.extra)).toEqual(Object.keys((hold as { extra: object }).extra))
  })

  test("a parked session that cannot be confirmed removed quarantines the workspace, and says what to do", () => {
    const { unremoved, hold } = decideEnding({ ...writer, outcome: { kind: "aborted" } })
    expect(hold).toBeUndefined()
    expect(unremoved?.hold).toEqual({
      state: "quarantined",
      extra: {
        sessionID: "ses_1",
        reason: "session ses_1 could not be confirmed removed after the task ended (cancelled)",
      },
    })
    expect(unremoved?.next).toStartWith("The workspace is quarantined: session ses_1 could not be confirmed removed")
  })

  test("the transcript line names the session kept: the reader's own, or the preserved one", () => {
    expect(decideEnding(reader).transcript).toBe("opencode export ses_1 (the conversation, kept for task_continue)")
    expect(decideEnding({ ...reader, preserveSessions: true }).transcript).toBe(
      "preserved session ses_1: opencode export ses_1",
    )
    // A parked session's line names the fork, known only once it exists (settle.ts).
    expect(decideEnding(writer).transcript).toBeUndefined()
  })
})
