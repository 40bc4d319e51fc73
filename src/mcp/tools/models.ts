import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { z } from "zod"
import { ROLES } from "../../config/schema"
import type { Delegations } from "../../engine/lifecycle"
import { readCatalog } from "../../opencode/catalog"
import { errorResult } from "../shared"
import description from "./models.md" with { type: "text" }

const roleRoute = z.object({ model: z.string().optional(), variant: z.string().optional() })

export function registerModels(server: McpServer, delegations: Delegations) {
  server.registerTool(
    "models",
    {
      title: "Models OpenCode offers",
      description,
      inputSchema: { filter: z.string().optional() },
      outputSchema: {
        models: z.array(z.object({ id: z.string(), name: z.string(), variants: z.array(z.string()) })),
        roles: z.object({ scout: roleRoute, worker: roleRoute, runner: roleRoute }),
      },
      annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    },
    async (args) => {
      try {
        const runtime = delegations.runtime
        const config = await runtime.config()
        const { client } = await runtime.opencode()
        const catalog = await readCatalog(client)
        const models = catalog.models.filter((m) => !args.filter || m.id.includes(args.filter))
        const roles = Object.fromEntries(
          ROLES.map((role) => [role, { model: config.models[role], variant: config.modelVariants[role] }]),
        ) as Record<(typeof ROLES)[number], z.infer<typeof roleRoute>>
        const lines = models.map((m) => `${m.id}${m.variants.length ? `  variants: ${m.variants.join(", ")}` : ""}`)
        const defaults = ROLES.map(
          (role) =>
            `${role}: ${roles[role].model ?? "OpenCode's default"}${roles[role].variant ? `#${roles[role].variant}` : ""}`,
        )
        return {
          content: [{ type: "text", text: [...lines, "", ...defaults].join("\n") }],
          structuredContent: { models, roles },
        }
      } catch (error) {
        return errorResult(error)
      }
    },
  )
}
