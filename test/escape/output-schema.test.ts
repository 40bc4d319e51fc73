// Structured output through the real OpenCode on the scripted model: the parent's output_schema is
// appended to the brief, the final answer's JSON is validated without coercion and returned as `output`;
// a mismatch is asked about once more in the same session (the validator's message quoted), and a second
// mismatch ends needs_review with `output_error` and the raw text, after exactly one extra model request.
// Attack: answers a lenient reader would accept (a string for an integer, a key twice, JSON inside prose,
// text after the fence) never become `output`. Control: the same answers without output_schema succeed as today,
// and a schema too deep, too big or not an object is refused before any task exists.
import { describe, expect, test } from "bun:test"
import { outputChecks } from "../../src/engine/outcome/output-check"
import { OUTPUT_SCHEMA_LIMITS } from "../../src/engine/outcome/output-schema"
import { battery, makeRepo, structuredOf, taskCount, textOf } from "./_world"

const say = (text: string) => ({ steps: [{ text }] })
const SCHEMA = {
  type: "object",
  properties: { count: { type: "integer" }, files: { type: "array", items: { type: "string" } } },
  required: ["count"],
  additionalProperties: false,
}
const VALID = '{"count":3,"files":["a.ts"]}'
const STRINGY = '{"count":"3"}'
// The old extractor's worst case: fence openers with no closing line, each of which its lazy fence regex
// followed to the end of the answer (quadratic: seconds of the request loop at this size, minutes at 1 MiB).
const OPENERS = "```json\n".repeat(25_000)
const DEEP = `${"[".repeat(100_000)}${"]".repeat(100_000)}`
// A schema pattern that backtracks on the strings the model chose: JavaScriptCore gives up on each after
// a second or two of backtracking, and the answer holds a hundred of them. No parser bounds that.
const BACKTRACK = JSON.stringify(Array.from({ length: 100 }, () => `${"a".repeat(40)}!`))
const PATTERN_SCHEMA = { type: "array", items: { type: "string", pattern: "^(a+)+$" } }

const { world, mcp } = battery({
  valid: { turns: [say(VALID)] },
  fenced: { turns: [say(`Counted them.\n\n\`\`\`json\n${VALID}\n\`\`\``)] },
  retry_ok: { turns: [say(STRINGY), say('{"count":3}')] },
  bad_twice: { turns: [say("There are three."), say(STRINGY), say(VALID)] },
  prose: {
    turns: [say(`The answer is ${VALID} as asked.`), say(`${"```json"}\n${VALID}\n${"```"}\nHope it helps.`)],
  },
  plain: { turns: [say(`The answer is ${STRINGY}.`)] },
  // What JSON.parse alone would turn into {"count":3}: the last of two keys wins.
  twice: { turns: [say('{"count":"3","count":3}'), say('{"count":"3","count":3}')] },
  again: { turns: [say(VALID), say(STRINGY), say(STRINGY)] },
  // The runner's report comes after its tool call: a second step in the same turn.
  runner: {
    turns: [{ steps: [{ tool: "sandbox_run_ro", args: { command: "echo checked" } }, { text: '{"count":1}' }] }],
  },
  idle: { turns: [say("nothing")] },
  openers: { turns: [say(OPENERS), say(OPENERS)] },
  deep: { turns: [say(DEEP), say(DEEP)] },
  backtrack: { turns: [say(BACKTRACK), say(BACKTRACK)] },
})

/** The requests that played a step of `script`, and the last user message each carried. */
const requestsOf = (script: string) =>
  world.model.stepRequests().filter((request) => request.play.kind === "step" && request.play.script === script)
const lastUser = (request: ReturnType<typeof requestsOf>[number]) =>
  JSON.stringify(request.body.messages.filter((message) => message.role === "user").at(-1)?.content ?? "")

describe("a structured answer", () => {
  test("valid JSON alone: output is the parsed value, no extra request; the brief carried the schema", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(await mcp.call("scout", { cwd, task: "[script:valid] count", output_schema: SCHEMA }))
    expect(out.status).toBe("succeeded")
    expect(out.output).toEqual({ count: 3, files: ["a.ts"] })
    expect(out.output_error).toBeUndefined()
    expect(requestsOf("valid")).toHaveLength(1)
    expect(lastUser(requestsOf("valid")[0]!)).toContain("additionalProperties")
    // Kept with the task: task_result reads it back from the record.
    const again = structuredOf(await mcp.call("task_result", { task_id: out.task_id }))
    expect(again.output).toEqual({ count: 3, files: ["a.ts"] })
  }, 120_000)

  test("prose then one ```json fence ending the answer is accepted (a worker)", async () => {
    const cwd = await makeRepo(world)
    const args = { cwd, task: "[script:fenced] count", output_schema: SCHEMA, verify: "true" }
    const out = structuredOf(await mcp.call("worker", args))
    expect(out.status).toBe("succeeded")
    expect(out.output).toEqual({ count: 3, files: ["a.ts"] })
    // Composes with verify: the server's check ran too.
    expect((out.verification as { exit_code: number }).exit_code).toBe(0)
  }, 120_000)

  test("a string for an integer, then a valid answer on the one retry: output, the validator quoted", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(await mcp.call("scout", { cwd, task: "[script:retry_ok] count", output_schema: SCHEMA }))
    expect(out.status).toBe("succeeded")
    expect(out.output).toEqual({ count: 3 })
    const requests = requestsOf("retry_ok")
    expect(requests).toHaveLength(2)
    expect(lastUser(requests[1]!)).toContain("output/count must be integer")
  }, 120_000)

  test("invalid twice: output_error, the raw text, needs_review, exactly one extra request", async () => {
    const cwd = await makeRepo(world)
    const result = await mcp.call("scout", { cwd, task: "[script:bad_twice] count", output_schema: SCHEMA })
    const out = structuredOf(result)
    expect(out.status).toBe("needs_review")
    expect(out.output).toBeUndefined()
    const error = out.output_error as { message: string; unverified: string }
    expect(error.message).toContain("output/count must be integer")
    expect(error.unverified).toBe(STRINGY)
    expect(textOf(result)).toContain("output_error:")
    // The first answer (prose) and the one retry; the valid third answer is never asked for.
    expect(requestsOf("bad_twice")).toHaveLength(2)
    expect(lastUser(requestsOf("bad_twice")[1]!)).toContain("no JSON value found")
  }, 120_000)

  test("task_continue keeps the schema: its brief carries it and its answer is judged again", async () => {
    const cwd = await makeRepo(world)
    const first = structuredOf(await mcp.call("scout", { cwd, task: "[script:again] count", output_schema: SCHEMA }))
    expect(first.output).toEqual({ count: 3, files: ["a.ts"] })
    const again = structuredOf(await mcp.call("task_continue", { task_id: first.task_id, task: "[script:again] more" }))
    expect(again.status).toBe("needs_review")
    expect(again.output).toBeUndefined()
    expect((again.output_error as { message: string }).message).toContain("output/count must be integer")
    const requests = requestsOf("again")
    expect(requests).toHaveLength(3)
    expect(lastUser(requests[1]!)).toContain("Structured answer")
  }, 120_000)

  test("attack: JSON inside prose, then text after the fence, never becomes output", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(await mcp.call("scout", { cwd, task: "[script:prose] count", output_schema: SCHEMA }))
    expect(out.status).toBe("needs_review")
    expect(out.output).toBeUndefined()
    expect((out.output_error as { message: string }).message).toContain("text follows")
  }, 120_000)

  test("attack: a key given twice, the last one valid, is not read as the valid value", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(await mcp.call("scout", { cwd, task: "[script:twice] count", output_schema: SCHEMA }))
    expect(out.status).toBe("needs_review")
    expect(out.output).toBeUndefined()
    expect((out.output_error as { message: string }).message).toContain('the key "count" appears twice')
    expect(requestsOf("twice")).toHaveLength(2)
  }, 120_000)

  test("control: without output_schema the same kind of answer succeeds as today, one request, no output", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(await mcp.call("scout", { cwd, task: "[script:plain] count" }))
    expect(out.status).toBe("succeeded")
    expect(out.report).toBe(`The answer is ${STRINGY}.`)
    expect([out.output, out.output_error]).toEqual([undefined, undefined])
    expect(requestsOf("plain")).toHaveLength(1)
    expect(lastUser(requestsOf("plain")[0]!)).not.toContain("Structured answer")
  }, 120_000)

  test("a runner's report is validated too", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(
      await mcp.call("runner", {
        cwd,
        command: "echo checked",
        objective: "Does it print? [script:runner]",
        output_schema: SCHEMA,
      }),
    )
    expect(out.exit_code).toBe(0)
    expect(out.output).toEqual({ count: 1 })
  }, 120_000)
})

describe("a hostile answer costs the task, never the process; the report is kept", () => {
  test("attack: 25,000 unclosed fence openers (the old extractor's quadratic case): refused, report kept", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(await mcp.call("scout", { cwd, task: "[script:openers] count", output_schema: SCHEMA }))
    expect(out.error).toBeUndefined()
    expect(out.status).toBe("needs_review")
    expect(out.output).toBeUndefined()
    const error = out.output_error as { message: string; unverified: string }
    expect(error.message).toContain("no JSON value found")
    expect(error.unverified.startsWith("```json\n```json\n")).toBe(true)
    expect(String(out.report).startsWith("```json\n```json\n")).toBe(true)
    expect(requestsOf("openers")).toHaveLength(2)
  }, 120_000)

  test("attack: a value nested 100,000 deep is refused at the depth bound, not a stack overflow; report kept", async () => {
    const cwd = await makeRepo(world)
    const out = structuredOf(await mcp.call("scout", { cwd, task: "[script:deep] count", output_schema: SCHEMA }))
    expect(out.status).toBe("needs_review")
    expect(out.output).toBeUndefined()
    expect(out.error).toBeUndefined()
    expect((out.output_error as { message: string }).message).toContain("nests deeper than 64 levels")
    expect(String(out.report).startsWith("[[[[")).toBe(true)
    // Asked once more quoting the bound, as for any mismatch.
    expect(lastUser(requestsOf("deep")[1]!)).toContain("nests deeper than 64 levels")
  }, 120_000)

  test("attack: a check that backtracks runs off the loop: a policy call is answered while it runs; report kept", async () => {
    const cwd = await makeRepo(world)
    const events: string[] = []
    const started = new Promise<void>((resolve) =>
      outputChecks.addEventListener("started", () => resolve(), { once: true }),
    )
    const onStarted = () => events.push("check started")
    const onEnded = () => events.push("check ended")
    outputChecks.addEventListener("started", onStarted)
    outputChecks.addEventListener("ended", onEnded)
    try {
      const task = mcp
        .call("scout", { cwd, task: "[script:backtrack] check", output_schema: PATTERN_SCHEMA })
        .then((result) => {
          events.push("task ended")
          return result
        })
      await started
      const policy = structuredOf(await mcp.call("policy", { cwd }))
      events.push("policy answered")
      expect(policy.mode).toBeString()
      const out = structuredOf(await task)
      // The first check was still running when the policy call came back; the task ended after every check.
      expect(events.slice(0, 3)).toEqual(["check started", "policy answered", "check ended"])
      expect(events.at(-1)).toBe("task ended")
      expect(out.status).toBe("needs_review")
      expect(out.output).toBeUndefined()
      expect((out.output_error as { message: string }).message).toContain("was stopped")
      expect((out.output_error as { unverified: string }).unverified).toBe(BACKTRACK)
      expect(String(out.report).startsWith(BACKTRACK.slice(0, 100))).toBe(true)
    } finally {
      outputChecks.removeEventListener("started", onStarted)
      outputChecks.removeEventListener("ended", onEnded)
    }
  }, 120_000)
})

describe("a schema the product will not use", () => {
  const deep = (levels: number): Record<string, unknown> =>
    levels <= 1 ? { type: "integer" } : { type: "array", items: deep(levels - 1) }

  test("too deep, too big, not a schema, or not an object: refused before any task; a small one runs", async () => {
    const cwd = await makeRepo(world)
    const tasks = await taskCount(world)
    const refused = [
      [deep(OUTPUT_SCHEMA_LIMITS.maxDepth + 1), "nests 9 levels"],
      [{ type: "object", description: "x".repeat(OUTPUT_SCHEMA_LIMITS.maxBytes) }, "over the limit of 8192"],
      [{ type: "objekt" }, "not a schema the validator accepts"],
      [[{ type: "object" }], "must be a JSON Schema object, got an array"],
      ["{}", "must be a JSON Schema object, got string"],
      [null, "must be a JSON Schema object, got null"],
    ] as const
    for (const tool of ["scout", "worker", "runner"])
      for (const [schema, problem] of refused) {
        const brief = tool === "runner" ? { command: "true", objective: "look" } : { task: "[script:idle] look" }
        const result = await mcp.call(tool, { cwd, ...brief, output_schema: schema })
        expect(result.isError).toBe(true)
        expect(textOf(result)).toContain(problem)
        expect(textOf(result)).toContain("next: Pass a JSON Schema object")
      }
    expect(await taskCount(world)).toBe(tasks)
    const small = await mcp.call("scout", { cwd, task: "[script:idle] look", output_schema: { type: "string" } })
    expect(small.isError).toBeFalsy()
    expect(await taskCount(world)).toBe(tasks + 1)
  }, 120_000)
})
