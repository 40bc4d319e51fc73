import { briefTool } from "./brief"
import description from "./scout.md" with { type: "text" }

export const scout = briefTool({
  role: "scout",
  title: "Scout (read-only investigation)",
  description,
  cwd: "Absolute path to investigate.",
  task: "Self-contained question.",
  writable: false,
  searchHint: "investigate explore the codebase, find where code is, read-only question",
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
})
