import { z } from "zod"
import { ROLES } from "../../engine/terms"
import { defineTool } from "../define"
import description from "./models.md" with { type: "text" }

const roleRoute = z.object({
  model: z.string().optional(),
  variant: z.string().optional(),
  fallbacks: z.array(z.string()).optional(),
})

export const models = defineTool({
  name: "models",
  title: "Models OpenCode offers",
  description,
  input: { filter: z.string().optional() },
  output: {
    models: z.array(z.object({ id: z.string(), name: z.string(), variants: z.array(z.string()) })),
    roles: z.object({ scout: roleRoute, worker: roleRoute, runner: roleRoute }),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  run: async (args, { delegations, engine }) => {
    const runtime = delegations.runtime
    const config = await runtime.config()
    const catalog = await runtime.catalog(({ client }) => engine.readCatalog(client))
    const models = catalog.models.filter((m) => !args.filter || m.id.includes(args.filter))
    const roles = Object.fromEntries(
      ROLES.map((role) => {
        const [model, ...fallbacks] = engine.roleModels(config, role)
        return [role, { model, variant: config.modelVariants[role], ...(fallbacks.length > 0 && { fallbacks }) }]
      }),
    ) as Record<(typeof ROLES)[number], z.infer<typeof roleRoute>>
    const lines = models.map((m) => `${m.id}${m.variants.length ? `  variants: ${m.variants.join(", ")}` : ""}`)
    const defaults = ROLES.map(
      (role) =>
        `${role}: ${roles[role].model ?? "OpenCode's default"}${roles[role].variant ? `#${roles[role].variant}` : ""}` +
        (roles[role].fallbacks ? `, then ${roles[role].fallbacks.join(", ")}` : ""),
    )
    return { text: [...lines, "", ...defaults].join("\n"), structured: { models, roles } }
  },
})
