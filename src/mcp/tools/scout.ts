import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Delegations } from "../../engine/lifecycle"
import { registerBriefTool } from "./brief"
import description from "./scout.md" with { type: "text" }

export function registerScout(server: McpServer, delegations: Delegations) {
  registerBriefTool(server, delegations, {
    role: "scout",
    title: "Scout (read-only investigation)",
    description,
    cwd: "Absolute path to investigate.",
    task: "Self-contained question.",
    writable: false,
    searchHint: "investigate explore the codebase, find where code is, read-only question",
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  })
}
