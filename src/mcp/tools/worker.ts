import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Delegations } from "../../engine/lifecycle"
import { registerBriefTool } from "./brief"
import description from "./worker.md" with { type: "text" }

export function registerWorker(server: McpServer, delegations: Delegations) {
  registerBriefTool(server, delegations, {
    role: "worker",
    title: "Worker (bounded implementation)",
    description,
    cwd: "Absolute path it may edit.",
    task: "Self-contained brief.",
    writable: true,
    searchHint: "delegate a small change, edit implement fix code, refactor",
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
  })
}
