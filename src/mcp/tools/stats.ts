import { z } from "zod"
import type { StatsRow } from "../../engine"
import { defineTool } from "../define"
import { tokensShape } from "../shared"
import { setAsideLines, setAsideRows, setAsideShape } from "./set_aside"
import description from "./stats.md" with { type: "text" }

const rowShape = z.object({
  role: z.string(),
  model: z.string(),
  tasks: z.number(),
  succeeded: z.number(),
  success_rate: z.number().describe("0 to 1."),
  tokens: tokensShape,
  cost: z.number(),
  steps: z.number(),
  bytes_kept_out: z.number(),
  bytes_returned: z.number().describe("What your model received of these results: their structured content's bytes."),
  median_duration_ms: z.number(),
})

const toRow = (r: StatsRow): z.infer<typeof rowShape> => ({
  role: r.role,
  model: r.model,
  tasks: r.tasks,
  succeeded: r.succeeded,
  success_rate: r.successRate,
  tokens: {
    input: r.tokens.input,
    output: r.tokens.output,
    reasoning: r.tokens.reasoning,
    cache_read: r.tokens.cacheRead,
    cache_write: r.tokens.cacheWrite,
  },
  cost: r.cost,
  steps: r.steps,
  bytes_kept_out: r.bytesKeptOut,
  bytes_returned: r.bytesReturned,
  median_duration_ms: r.medianDurationMs,
})

export const stats = defineTool({
  name: "stats",
  title: "Delegation ledger",
  description,
  input: { since: z.string().min(1).max(40).optional().describe("24h, 7d, 2w or a date.") },
  output: { since: z.string().optional(), rows: z.array(rowShape), total: rowShape, set_aside: setAsideShape },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations, engine }) => {
    const stats = await delegations.stats(args.since ? engine.parseSince(args.since, Date.now()) : undefined)
    // The sum is over the records that read; one set aside is named here (once), not a reason to fail.
    const setAside = delegations.takeSetAside()
    const text = [engine.renderStats(stats), ...setAsideLines(setAside)].join("\n")
    const structured = { since: stats.since, rows: stats.rows.map(toRow), total: toRow(stats.total) }
    return { text, structured: { ...structured, ...(setAside.length ? { set_aside: setAsideRows(setAside) } : {}) } }
  },
})
