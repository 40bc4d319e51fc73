import { briefTool } from "./brief"
import description from "./worker.md" with { type: "text" }

export const worker = briefTool({
  role: "worker",
  title: "Worker (bounded implementation)",
  description,
  cwd: "Absolute path it may edit.",
  task: "Self-contained brief.",
  writable: true,
  searchHint: "delegate a small change, edit implement fix code, refactor",
  annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
})
