import { describe, expect, test } from "bun:test"
import { disposal, type Disposal, type DisposalFacts } from "../../src/engine/outcome/disposal-decision"

// The usual ending: a writer whose session exists, OpenCode reachable, nothing preserved or lost.
const writer: DisposalFacts = {
  writable: true,
  preserveSessions: false,
  lost: false,
  reachable: true,
  sessionID: "ses_1",
  late: false,
}
const reader: DisposalFacts = { ...writer, writable: false }

describe("what becomes of a task's session once its turn ended", () => {
  test.each([
    ["a writer's session is forked and removed", writer, "park"],
    ["a reader keeps its own idle session for task_continue", reader, "keep"],
    ["a reader keeps it even with OpenCode unreachable", { ...reader, reachable: false }, "keep"],
    ["preserved sessions are kept for diagnosis, a writer's", { ...writer, preserveSessions: true }, "preserve"],
    ["preserved sessions are kept for diagnosis, a reader's", { ...reader, preserveSessions: true }, "preserve"],
    [
      "a lost server frees the workspace, whatever else holds",
      { ...writer, lost: true, preserveSessions: true, reachable: false },
      "gone",
    ],
    ["a lost server with no session", { ...writer, lost: true, sessionID: undefined }, "gone"],
    [
      "a writer's session OpenCode cannot be reached to remove is quarantined",
      { ...writer, reachable: false },
      "quarantine",
    ],
    ["a creation still in flight waits for its session", { ...writer, sessionID: undefined, late: true }, "late"],
    [
      "a creation still in flight waits for it on a reader too",
      { ...reader, sessionID: undefined, late: true },
      "late",
    ],
    [
      "a creation still in flight wins over an unreachable OpenCode",
      { ...writer, reachable: false, late: true },
      "late",
    ],
    ["a session reachable for removal wins over a creation in flight", { ...writer, late: true }, "park"],
    [
      "preserving needs a session: none, nothing to keep",
      { ...writer, sessionID: undefined, preserveSessions: true },
      "none",
    ],
    ["no session and nothing in flight", { ...writer, sessionID: undefined }, "none"],
    ["no session, OpenCode unreachable", { ...reader, sessionID: undefined, reachable: false }, "none"],
  ] as [string, DisposalFacts, Disposal][])("%s", (_, facts, expected) => {
    expect(disposal(facts)).toBe(expected)
  })
})
