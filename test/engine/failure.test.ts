// The failure classifier against OpenCode's own payloads: each captured case is what OpenCode sent
// when the scripted model failed that way (fixtures/provider-errors.json, captured by
// scripts/capture-provider-errors.ts); the kinds the scripted model cannot provoke are built from
// OpenCode's SDK error types and say so in their names.
import { describe, expect, test } from "bun:test"
import { classifyFailure, type Failure, type FailureFacts, type OpencodeError } from "../../src/engine/turn/failure"
import { adviceTable, FAILURE_KINDS, type FailureKind } from "../../src/engine/records/failure-kinds"
import { retryDelay, type RetryFacts } from "../../src/engine/turn/retry"
import type { Status } from "../../src/engine/records/status"
import fixtures from "./fixtures/provider-errors.json"

interface Captured {
  status: Status
  sessionError?: OpencodeError
  messageError?: OpencodeError
  lastRetry?: string
  error?: string
}
const captured = fixtures.captured as Record<string, Captured>

/** The facts settle passes: the session.error object, else the message's, plus the retry line it saw. */
const factsOf = (c: Captured): FailureFacts => ({
  status: c.status,
  error: c.sessionError ?? c.messageError,
  retrying: c.lastRetry && `retrying (${c.lastRetry}), attempt 4`,
  text: c.error,
})

describe("captured from OpenCode driving the scripted model", () => {
  test.each([
    ["401", "auth", false],
    ["quota", "quota", false],
    ["unknown_model", "model_not_found", false],
    ["context", "context_length", false],
    ["429", "rate_limit", true],
    // OpenCode retries these until the deadline: the cause is the provider's, and a retry unchanged would time out again.
    ["500", "overloaded", false],
    ["503", "overloaded", false],
    ["cut", "network", false],
  ] as const)("%s → %s (transient: %p)", (name, kind, transient) => {
    const failure = classifyFailure(factsOf(captured[name]!))
    expect(failure?.kind).toBe(kind)
    expect(failure?.transient).toBe(transient)
    expect(failure?.advice).toBeTruthy()
    expect(failure?.next).toBeTruthy()
  })

  test("a 429's retry-after header becomes the wait the next step names", () => {
    const failure = classifyFailure(factsOf(captured["429"]!))
    expect(failure?.retryAfterS).toBe(2)
    expect(failure?.next).toContain("Wait 2 s")
  })

  test("the assistant message's error alone (no session.error seen) classifies the same", () => {
    for (const name of ["401", "unknown_model", "context", "429"]) {
      const c = captured[name]!
      expect(classifyFailure({ status: c.status, error: c.messageError })?.kind).toBe(classifyFailure(factsOf(c))!.kind)
    }
  })

  test("a deadline reached while OpenCode retried is classified from settle's error line alone", () => {
    expect(classifyFailure({ status: "timed_out", text: captured.quota!.error })?.kind).toBe("quota")
    expect(classifyFailure({ status: "timed_out", text: captured.cut!.error })?.kind).toBe("network")
  })
})

const facts = (status: Status, error?: OpencodeError, more: Partial<FailureFacts> = {}): FailureFacts => ({
  status,
  error,
  ...more,
})

describe("built from OpenCode's SDK error types (the scripted model cannot provoke these)", () => {
  test.each<[string, FailureFacts, FailureKind]>([
    [
      "ProviderAuthError (OpenCode has no credentials for the provider)",
      facts("failed", { name: "ProviderAuthError", data: { providerID: "anthropic", message: "no key" } }),
      "auth",
    ],
    ["MessageOutputLengthError", facts("failed", { name: "MessageOutputLengthError", data: {} }), "output_limit"],
    [
      "MessageAbortedError (cancelled from the TUI)",
      facts("cancelled", { name: "MessageAbortedError", data: { message: "Aborted" } }),
      "cancelled",
    ],
    [
      "APIError 529 from an Anthropic-style body",
      facts("failed", {
        name: "APIError",
        data: {
          message: "Overloaded",
          statusCode: 529,
          isRetryable: true,
          responseBody: '{"type":"error","error":{"type":"overloaded_error"}}',
        },
      }),
      "overloaded",
    ],
    [
      "APIError 402 payment required",
      facts("failed", { name: "APIError", data: { message: "Payment Required", statusCode: 402, isRetryable: false } }),
      "quota",
    ],
    [
      "OpenCode's retry wording for too_many_requests",
      facts("timed_out", undefined, { retrying: "retrying (Too Many Requests), attempt 3" }),
      "rate_limit",
    ],
    [
      "OpenCode's retry wording for resource_exhausted",
      facts("timed_out", undefined, { retrying: "retrying (Provider is overloaded), attempt 3" }),
      "overloaded",
    ],
    [
      "UnknownError with nothing recognisable",
      facts("failed", { name: "UnknownError", data: { message: "no_kv_space" } }),
      "unknown",
    ],
  ])("%s", (_name, input, kind) => {
    expect(classifyFailure(input)?.kind).toBe(kind)
  })
})

describe("from how the turn ended", () => {
  test.each<[string, FailureFacts, FailureKind]>([
    ["a deadline with no provider error is a timeout", facts("timed_out"), "timeout"],
    [
      "the deadline's own abort is a timeout",
      facts("timed_out", { name: "MessageAbortedError", data: { message: "Aborted" } }),
      "timeout",
    ],
    [
      "a lost server",
      facts("failed", undefined, { lost: true, text: "server_lost: the shared OpenCode server stopped" }),
      "server_lost",
    ],
    [
      "the sandbox plugin not loaded (our own refusal, no OpenCode error)",
      facts("failed", undefined, {
        text: "The shared OpenCode server has not loaded this program's sandbox plugin for /w, so delegated agents would read and write files on the host",
      }),
      "sandbox",
    ],
    ["a cancel", facts("cancelled"), "cancelled"],
    [
      "our stop for a spent cap (the session's abort is ours, not a cancel)",
      facts("failed", { name: "MessageAbortedError", data: { message: "Aborted" } }, { overBudget: true }),
      "budget",
    ],
    [
      "control: the same abort without a spent cap is a cancel",
      facts("cancelled", { name: "MessageAbortedError", data: { message: "Aborted" } }),
      "cancelled",
    ],
  ])("%s", (_name, input, kind) => {
    expect(classifyFailure(input)?.kind).toBe(kind)
  })

  test("a turn that did not fail has no kind", () => {
    expect(classifyFailure(facts("succeeded"))).toBeUndefined()
    expect(classifyFailure(facts("needs_review"))).toBeUndefined()
  })
})

test("every kind has advice and a next step", () => {
  expect(adviceTable().map((row) => row.kind)).toEqual([...FAILURE_KINDS])
  for (const row of adviceTable()) expect(row.advice.length * row.next.length).toBeGreaterThan(0)
})

describe("retryDelay: a read-only turn that failed transiently before producing output runs again", () => {
  const rateLimited = classifyFailure(factsOf(captured["429"]!))!
  const network: Failure = {
    ...classifyFailure({ status: "failed", text: "Connection reset by server" })!,
    retryAfterS: undefined,
  }
  const base: RetryFacts = { failure: rateLimited, writable: false, produced: false, retries: 0, msLeft: 300_000 }
  test.each<[string, Partial<RetryFacts>, number | undefined]>([
    ["a scout's 429 waits the provider's retry-after", {}, 2000],
    ["without a retry-after, backoff doubles from 2 s", { failure: network, retries: 1 }, 4000],
    ["a writer never", { writable: true }, undefined],
    ["not once it answered or ran tools", { produced: true }, undefined],
    ["at most twice", { retries: 2 }, undefined],
    ["not when the wait would leave under 10 s of the deadline", { msLeft: 11_000 }, undefined],
    ["not an auth failure", { failure: classifyFailure(factsOf(captured["401"]!)) }, undefined],
    [
      "not a provider that kept failing until the deadline",
      { failure: classifyFailure(factsOf(captured["500"]!)) },
      undefined,
    ],
    [
      "not a lost server (drive runs that again itself, once)",
      { failure: classifyFailure({ status: "failed", lost: true }) },
      undefined,
    ],
    ["not a turn that did not fail", { failure: undefined }, undefined],
  ])("%s", (_name, change, delay) => {
    expect(retryDelay({ ...base, ...change })).toBe(delay)
  })
})
