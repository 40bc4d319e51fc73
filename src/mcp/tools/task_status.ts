import { z } from "zod"
import type { TaskRecord } from "../../engine"
import { STATUSES, checkTaskId, isFinished, fail, roleLabel } from "../../engine/terms"
import { syncBudget } from "../calls"
import { defineTool, type Engine } from "../define"
import description from "./task_status.md" with { type: "text" }

const MAX_WAIT_S = 50

export const statusShape = {
  task_id: z.string(),
  status: z.enum(STATUSES),
  role: z.string(),
  workspace: z.string(),
  session_id: z.string().optional(),
  revision: z.number().describe("Bumped on every change; pass it back as after_revision to wait for the next one."),
  progress: z.array(z.string()).describe("The latest progress lines, oldest first."),
  elapsed_ms: z.number(),
  turns: z.number(),
  step: z.number().optional().describe("Running: the model step the session is in."),
  last_tool: z.string().optional().describe("Running: the latest tool the agent called."),
  last_target: z.string().optional().describe("Running: what that tool worked on (a path, a pattern, a command)."),
  seconds_since_event: z
    .number()
    .optional()
    .describe(
      "Running: seconds since the session's latest event. " +
        "Long silence with a busy session means a stuck tool or a provider that does not answer.",
    ),
  waiting_input: z
    .object({
      questions: z.array(
        z.object({ question: z.string(), header: z.string(), options: z.array(z.string()), free: z.boolean() }),
      ),
      since: z.string(),
      until: z.string(),
    })
    .optional()
    .describe("Running: the agent's question waiting for task_respond."),
  note: z.string().optional(),
  next: z.string(),
}

export function statusOfRecord(engine: Engine, record: TaskRecord, now = Date.now()) {
  const finished = isFinished(record.status)
  const activity = finished ? undefined : record.activity
  const waiting = finished ? undefined : engine.waitingOf(record)
  return {
    task_id: record.id,
    status: record.status,
    role: roleLabel(record),
    workspace: record.workspace,
    session_id: record.sessionID,
    revision: record.revision,
    progress: record.progress.slice(-10),
    elapsed_ms: (record.finishedAt ? Date.parse(record.finishedAt) : Date.now()) - Date.parse(record.createdAt),
    turns: record.turns,
    step: activity?.step,
    last_tool: activity?.tool,
    last_target: activity?.target,
    seconds_since_event: activity && Math.max(0, Math.round((now - Date.parse(activity.at)) / 1000)),
    waiting_input: waiting,
    note: record.note,
    next: finished
      ? "Finished: call task_result for the report and evidence."
      : waiting
        ? `Waiting for an answer until ${waiting.until}: call task_respond with task_id and answer.`
        : `Running: call task_status again with after_revision ${record.revision} and wait_seconds, or task_cancel.`,
  }
}

/** `step 3 · last: read src/app.ts · 4s since the last event`, for a running task that has had an event. */
function livenessLine(status: ReturnType<typeof statusOfRecord>): string | undefined {
  if (status.seconds_since_event === undefined) return undefined
  const last = status.last_tool && `last: ${[status.last_tool, status.last_target].filter(Boolean).join(" ")}`
  return [status.step && `step ${status.step}`, last, `${status.seconds_since_event}s since the last event`]
    .filter(Boolean)
    .join(" · ")
}

/** The question waiting for task_respond, one line per question with its options. */
function waitingLines(waiting: ReturnType<Engine["waitingOf"]>): string[] {
  return (waiting?.questions ?? []).map((question) => {
    const options = question.options.map((option) => JSON.stringify(option)).join(", ")
    const takes = [options && `one of ${options}`, question.free && "free text"].filter(Boolean).join(" or ")
    return `waiting_input: ${question.question} (answer: ${takes})`
  })
}

export const taskStatus = defineTool({
  name: "task_status",
  title: "Task status",
  description,
  input: {
    task_id: z.string().min(1),
    wait_seconds: z.number().int().min(0).max(MAX_WAIT_S).default(0).describe("Wait for a change; 0: answer now."),
    after_revision: z.number().int().min(0).optional().describe("Wait for changes after it."),
  },
  output: statusShape,
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { peer, delegations, engine }) => {
    checkTaskId(args.task_id)
    const waitMs = Math.min(args.wait_seconds * 1000, await syncBudget(peer, delegations))
    const record = await delegations.wait(args.task_id, waitMs, args.after_revision)
    if (!record) throw fail("Usage", `No task ${args.task_id}.`, "Call task_list for the known tasks.")
    const status = statusOfRecord(engine, record)
    const text = [
      `${status.status} · ${status.role} · ${Math.round(status.elapsed_ms / 1000)}s`,
      livenessLine(status),
      ...status.progress,
      ...waitingLines(status.waiting_input),
      `next: ${status.next}`,
    ]
    return { text: text.filter(Boolean).join("\n"), structured: status }
  },
})
