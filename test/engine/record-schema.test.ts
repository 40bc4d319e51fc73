// The task record's one schema (src/engine/records/record-schema.ts): TaskRecord is inferred from it, so every
// part a reader trusts is checked when a record file is read, including parts no listing looked at before (a
// verification, a policy decision, a failure kind). Each attack plants a wrong part in an otherwise good
// record; its control is the same record with that part well formed. A waiting question is the exception:
// a malformed one is read as none, so the task stays listed (task_respond then refuses it). Keys a newer
// version wrote at the top level survive a read; a part a lower module types (`owned`) keeps what it does
// not check.
import { describe, expect, test } from "bun:test"
import { RecordSchema, type TaskRecord } from "../../src/engine/records/record-schema"
import { sampleRecord } from "./_records"

const parse = (record: unknown) => RecordSchema.safeParse(JSON.parse(JSON.stringify(record)))
const problem = (record: unknown) => {
  const parsed = parse(record)
  return parsed.success ? undefined : parsed.error.issues.map((issue) => issue.path.join(".")).join(", ")
}
const finished = () => sampleRecord() as TaskRecord & { result: NonNullable<TaskRecord["result"]> }

describe("the task record's schema", () => {
  test.each([
    [
      "a verification whose exit code is a word",
      (r: ReturnType<typeof finished>) => {
        r.result.verification = { command: "make test", exitCode: "zero" as never, durationMs: 5, digest: "" }
      },
      "result.verification.exitCode",
    ],
    [
      "a policy decision in a mode that does not exist",
      (r: ReturnType<typeof finished>) => {
        r.calls = [{ turn: 1, mode: "lenient" as never, source: "argument", delegation: { role: "scout" } }]
      },
      "calls.0.mode",
    ],
    [
      "a failure kind that does not exist",
      (r: ReturnType<typeof finished>) => {
        r.result.errorKind = "bad_luck" as never
      },
      "result.errorKind",
    ],
    [
      "a route without its provider",
      (r: ReturnType<typeof finished>) => {
        r.route = { modelID: "m" } as never
      },
      "route.providerID",
    ],
    [
      "a file change of a kind git never reports",
      (r: ReturnType<typeof finished>) => {
        r.result.files = [{ path: "a", change: "copied" as never }]
      },
      "result.files.0.change",
    ],
  ])("attack: %s is refused at that path", (_, plant, path) => {
    const record = finished()
    plant(record)
    expect(problem(record)).toBe(path)
  })

  test("control: the same parts well formed pass", () => {
    const record = finished()
    record.result.verification = { command: "make test", exitCode: 0, durationMs: 5, digest: "" }
    record.waiting = {
      questions: [{ question: "q", header: "h", options: ["a"], free: false }],
      since: "x",
      until: "y",
    }
    record.calls = [{ turn: 1, mode: "blueprint", source: "argument", delegation: { role: "scout" } }]
    record.result.errorKind = "rate_limit"
    record.route = { providerID: "local", modelID: "m" }
    record.result.files = [{ path: "a", change: "added" }]
    expect(problem(record)).toBeUndefined()
  })

  test("a malformed waiting question is no question: the record reads, without it; a sound one is kept", () => {
    for (const waiting of ["yes", { questions: [] }, { questions: [{ question: "q", header: "h", free: false }] }]) {
      const record = { ...finished(), status: "running", waiting }
      const parsed = parse(record)
      expect(parsed.success).toBe(true)
      expect(parsed.data!.waiting).toBeUndefined()
    }
    // Control: a well-formed one is read as written.
    const sound = { questions: [{ question: "q", header: "h", options: ["a"], free: false }], since: "x", until: "y" }
    expect(parse({ ...finished(), status: "running", waiting: sound }).data!.waiting).toEqual(sound)
  })

  test("a key a newer version wrote at the top level is kept; an owned part keeps what it does not check", () => {
    const record = { ...finished(), laterField: { kept: true } }
    record.route = { providerID: "local", modelID: "m", laterRouteField: 1 } as never
    const parsed = parse(record)
    expect(parsed.success).toBe(true)
    expect((parsed.data as Record<string, unknown>).laterField).toEqual({ kept: true })
    expect((parsed.data!.route as unknown as Record<string, unknown>).laterRouteField).toBe(1)
    // Control: a part the record declares itself is read as declared, so an unknown key inside it is not kept.
    const nested = finished()
    ;(nested.result as Record<string, unknown>).laterResultField = 1
    expect((parse(nested).data!.result as Record<string, unknown>).laterResultField).toBeUndefined()
  })
})
