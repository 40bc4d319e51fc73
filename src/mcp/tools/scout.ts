import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { Delegations } from "../../engine/lifecycle"
import { registerBriefTool } from "./brief"
import description from "./scout.md" with { type: "text" }

export function registerScout(server: McpServer, delegations: Delegations) {
  registerBriefTool(server, delegations, {
    role: "scout",
    title: "Scout (read-only investigation)",
    description,
    cwd: "Absolute path of the repository or directory to investigate.",
    task: "The self-contained question and the form of answer wanted.",
    writable: false,
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  })
}
