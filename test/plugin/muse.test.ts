// Provider quirks for OpenCode Console/Zen Muse Spark models, on the real OpenCode: the scripted model
// stands in for `opencode/muse-spark-test` (an override of the built-in `opencode` provider) and
// records what OpenCode sends. For an orchestrator agent on that model the plugin leaves the hidden
// reasoning out of later requests; a model with another id, or another agent on the Muse model, keeps
// it. The last allowed step's request is pinned too: OpenCode 1.18.33 never sends `tool_choice: "none"`.
import { afterAll, beforeAll, expect, test } from "bun:test"
import type { RecordedRequest } from "../../src/model/server"
import { makeRepo, runAgent, startWorld, stopWorld, type World } from "./_world"
import { SCOUT } from "../helpers/steps"

const MUSE = "opencode/muse-spark-test"
const OTHER = "opencode/spark-test"
/** The scout's step limit here: three tool steps, then the step where OpenCode asks for text only. */
const STEPS = 4

const read = (thought: string) => ({ tool: "read", args: { filePath: "README.md" }, reasoning: `hidden ${thought}` })

let world: World
beforeAll(async () => {
  world = await startWorld(
    {
      think: {
        turns: [
          {
            steps: [
              read("one"),
              read("two"),
              read("three"),
              { tool: "read", args: { filePath: "README.md" } },
              { text: "report: {{lastToolOutput}}", reasoning: "hidden last" },
            ],
          },
        ],
      },
    },
    {
      providers: { opencode: ["muse-spark-test", "spark-test"] },
      config: { stepLimits: { profile: "custom", scout: STEPS, worker: STEPS, runner: STEPS } },
    },
  )
}, 120_000)
afterAll(() => stopWorld(world))

/** The step requests one session sent, in order. */
const requestsOf = (sessionID: string) => world.model.stepRequests().filter((r) => r.sessionId === sessionID)

/** Reasoning replayed on the assistant messages of a request. */
const replayed = (request: RecordedRequest) =>
  request.body.messages.flatMap((m) => (m.role === "assistant" && m.reasoning_content ? [m.reasoning_content] : []))

const callsReplayed = (request: RecordedRequest) => request.body.messages.flatMap((m) => m.tool_calls ?? []).length

async function run(agent: string, model: string) {
  const dir = await makeRepo(world)
  const { turn, sessionID } = await runAgent(world, agent, dir, "think", model)
  expect(turn.outcome).toEqual({ kind: "idle" })
  return { turn, sessionID, dir, requests: requestsOf(sessionID) }
}

/** Reasoning the session itself stored, as OpenCode's API returns it. */
async function storedReasoning(sessionID: string, directory: string) {
  const { client } = await world.runtime.opencode()
  const { data } = await client.session.messages({ sessionID, directory })
  return (data ?? []).flatMap((message) =>
    message.parts.flatMap((part) => (part.type === "reasoning" ? [part.text] : [])),
  )
}

test("a scout on opencode/muse-spark-*: later requests carry no reasoning, the tool history and the report stay", async () => {
  const { turn, sessionID, dir, requests } = await run(SCOUT, MUSE)
  expect(requests.length).toBe(STEPS)
  expect(requests.every((r) => r.body.model === "muse-spark-test")).toBe(true)
  expect(requests.map(replayed)).toEqual([[], [], [], []])
  expect(requests.map(callsReplayed)).toEqual([0, 1, 2, 3])
  expect(requests.at(-1)!.body.messages.filter((m) => m.role === "tool").length).toBe(3)
  expect(turn.transcript?.text).toContain("report: ")
  expect(turn.transcript?.text).toContain("# fixture")
  // The session keeps the reasoning it received; only the requests leave it out.
  expect(await storedReasoning(sessionID, dir)).toEqual(["hidden one", "hidden two", "hidden three", "hidden last"])
}, 120_000)

test("control: the same scout on a model that is not Muse Spark gets its reasoning replayed", async () => {
  const { requests } = await run(SCOUT, OTHER)
  expect(requests.map(replayed)).toEqual([
    [],
    ["hidden one"],
    ["hidden one", "hidden two"],
    ["hidden one", "hidden two", "hidden three"],
  ])
}, 120_000)

test("control: another agent on the Muse Spark model gets its reasoning replayed", async () => {
  const { requests } = await run("build", MUSE)
  expect(requests.length).toBe(5)
  expect(requests.at(-1) && replayed(requests.at(-1)!)).toEqual(["hidden one", "hidden two", "hidden three"])
}, 120_000)

// OpenCode 1.18.33 has no final tool-less step: the last allowed one still offers the tools, and the
// AI SDK sends `tool_choice: "auto"`. If an upgrade starts sending "none" (which Console refuses),
// this fails and the field needs dropping, which no hook of 1.18.33 can reach (plugin/quirks.ts).
test("the last allowed step's request still offers the tools with tool_choice auto, not none, and the report comes back", async () => {
  const { turn, requests } = await run(SCOUT, MUSE)
  const [earlier, last] = [requests.at(-2)!, requests.at(-1)!]
  expect(last.play).toMatchObject({ kind: "step", maxSteps: true })
  expect(JSON.stringify(last.body.messages)).toContain("MAXIMUM STEPS REACHED")
  expect(last.body.tools?.map((t) => t.function.name)).toEqual(earlier.body.tools!.map((t) => t.function.name))
  expect(last.body.tools?.length).toBeGreaterThan(0)
  expect(last.body.tool_choice).toBe("auto")
  expect(turn.transcript?.text).toContain("report: ")
}, 120_000)
