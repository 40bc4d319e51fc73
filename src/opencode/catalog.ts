// The models OpenCode can route to, as OpenCode itself reports them (never a list kept here).
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { fail } from "../errors"
import { formatModel, type ModelRoute } from "./session"

export interface CatalogModel {
  id: string
  name: string
  variants: string[]
}

export interface Catalog {
  models: CatalogModel[]
  /** provider id → its default model id */
  defaults: Record<string, string>
}

export async function readCatalog(client: OpencodeClient, directory?: string): Promise<Catalog> {
  const result = await client.config.providers({ directory })
  if (!result.data) throw fail("Server", "OpenCode did not return its model catalog.")
  const models = result.data.providers.flatMap((provider) =>
    Object.entries(provider.models).map(([id, model]) => ({
      id: `${provider.id}/${id}`,
      name: model.name ?? id,
      variants: Object.keys(model.variants ?? {}),
    })),
  )
  return { models: models.sort((a, b) => a.id.localeCompare(b.id)), defaults: result.data.default }
}

/** Throws a usage error naming close matches when OpenCode cannot route to the model or variant. */
export function checkRoute(catalog: Catalog, route: ModelRoute): void {
  const id = `${route.providerID}/${route.modelID}`
  const model = catalog.models.find((m) => m.id === id)
  if (!model) {
    const near = catalog.models.filter((m) => m.id.startsWith(`${route.providerID}/`) || m.id.includes(route.modelID)).slice(0, 5)
    throw fail(
      "Usage",
      `OpenCode has no model "${id}".`,
      near.length ? `Available near matches: ${near.map((m) => m.id).join(", ")}. Call the models tool for the full list.` : "Call the models tool (or `opencode-mcp-orchestrator models`) for the list OpenCode offers.",
    )
  }
  if (route.variant && !model.variants.includes(route.variant))
    throw fail(
      "Usage",
      `Model ${formatModel({ ...route, variant: undefined })} has no variant "${route.variant}".`,
      model.variants.length ? `Its variants: ${model.variants.join(", ")}; omit the variant to let OpenCode choose.` : "This model has no variants; omit the variant.",
    )
}
