// waitIdle with a signal that was aborted before the wait began (a cancel that arrives while the
// prompt is being sent) settles as aborted instead of throwing.
import { expect, test } from "bun:test"
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import type { EventHub } from "../../src/opencode/client"
import { waitIdle } from "../../src/opencode/session"

test("an already-aborted signal resolves to aborted and unsubscribes", async () => {
  let subscribed = 0
  const hub = {
    on: () => {
      subscribed++
      return () => subscribed--
    },
  } as unknown as EventHub
  const controller = new AbortController()
  controller.abort()
  const outcome = await waitIdle({} as OpencodeClient, hub, "ses_x", "/tmp", {
    signal: controller.signal,
    deadline: Date.now() + 60_000,
  })
  expect(outcome).toEqual({ kind: "aborted" })
  expect(subscribed).toBe(0)
})
