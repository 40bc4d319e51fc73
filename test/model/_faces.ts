// Shared by the tests of the scripted model's API faces (Anthropic Messages, OpenAI Responses): the
// scripts each face plays, the SSE events of a streamed reply, and a stream read until it is dropped.
import { afterAll, beforeAll, expect } from "bun:test"
import type { ScriptInput } from "../../src/model/script"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"

/**
 * The scripted model for a whole test file, started in a beforeAll and stopped in an afterAll; it plays
 * `scout` (a tool call, then a text quoting its output), `limited` (a 429 with retry-after, then a text),
 * `cut` (a stream dropped midway, then whole) and the file's own `extra` scripts. Filled in by the
 * beforeAll: hooks and tests use it.
 */
export function scriptedFace(extra: Record<string, ScriptInput> = {}): ScriptedModel {
  const model = {} as ScriptedModel
  beforeAll(async () => {
    Object.assign(
      model,
      await startScriptedModel({
        scripts: {
          scout: {
            turns: [
              {
                steps: [
                  { tool: "mcp__orch__scout", args: { cwd: "/repo", task: "look" } },
                  { text: "Scout said: {{lastToolOutput}}" },
                ],
              },
            ],
          },
          ...extra,
          limited: { turns: [{ steps: [{ text: "after a wait", fail: { kind: "429", retryAfterSeconds: 2 } }] }] },
          cut: { turns: [{ steps: [{ text: "the whole answer", fail: { kind: "cut" } }] }] },
        },
      }),
    )
  })
  afterAll(() => model.stop())
  return model
}

/** The SSE events of a body, checking each `event:` line names its data's type. */
export async function events<Event extends { type: string }>(response: Response): Promise<Event[]> {
  const frames = (await response.text()).split("\n\n").filter((frame) => frame.trim())
  return frames.map((frame) => {
    const [name, data] = frame.split("\n")
    const parsed = JSON.parse(data!.replace(/^data: /, "")) as Event
    expect(name).toBe(`event: ${parsed.type}`)
    return parsed
  })
}

/** What a stream delivered before it broke off, and the error it broke off with (undefined if it ended). */
export async function readUntilDropped(response: Response): Promise<{ received: string; error: unknown }> {
  let received = ""
  try {
    for await (const piece of response.body!) received += new TextDecoder().decode(piece)
  } catch (error) {
    return { received, error }
  }
  return { received, error: undefined }
}
