// Which routes a delegation takes: the model the parent named (never replaced), else the ones config.json
// lists for the role (the first, then its fallbacks, fallback.ts), and the check against what OpenCode offers
// that runs before any session.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { roleModels, type Role } from "../../config/schema"
import { fail } from "../../errors"
import { checkRoute, readCatalog } from "../../opencode/catalog"
import { parseModel, type ModelRoute } from "../../opencode/session"
import { configModelReadiness, refuseUnready, type Runtime } from "../capacity"

/** What a call asks of its route: the parent's model and variant, and a user role's own. */
export interface RouteRequest {
  model?: string
  variant?: string
  /**
   * A user role's models (roles.<name>.model in config.json): they take the place of the role's list and are
   * checked against the catalog as a parent's model is.
   */
  named?: { models: string[]; variant?: string }
}

export async function resolveRoute(
  runtime: Runtime,
  role: Role,
  { model, variant, named }: RouteRequest = {},
): Promise<{ route?: ModelRoute; explicit: boolean; fallbacks?: ModelRoute[]; checkAsNamed: boolean }> {
  const config = await runtime.config()
  const fromRole = named !== undefined && named.models.length > 0
  const listed = fromRole ? named.models : roleModels(config, role)
  const id = model ?? listed[0]
  if (model !== undefined && !/^[^/\s]+\/\S+$/.test(model))
    throw fail(
      "Usage",
      `model must be written provider/model, got "${model}".`,
      "Call the models tool for the ids OpenCode offers.",
    )
  const listedVariant = fromRole ? named.variant : config.modelVariants[role]
  const chosenVariant = variant ?? (model === undefined ? listedVariant : undefined)
  if (!id) {
    if (variant)
      throw fail("Usage", "A variant needs a model.", `Pass model as well, or set models.${role} in the config.`)
    return { explicit: false, checkAsNamed: false }
  }
  const explicit = model !== undefined || variant !== undefined
  // A model or variant the parent named is never replaced; a config list's variant belongs to its first model.
  const rest = explicit ? [] : listed.slice(1).map((next) => parseModel(next))
  return {
    route: { ...parseModel(id), variant: chosenVariant },
    explicit,
    checkAsNamed: explicit || fromRole,
    ...(rest.length > 0 && { fallbacks: rest }),
  }
}

/** Checks the route against what OpenCode offers, before any session; one from config.json says where to fix it. */
export async function checkOffered(
  runtime: Runtime,
  client: OpencodeClient,
  workspace: string,
  role: Role,
  route: ModelRoute,
  explicit: boolean,
) {
  const catalog = await readCatalog(client, workspace)
  if (explicit) return checkRoute(catalog, route)
  // A model from config.json is checked too (OpenCode may have dropped it since install), by the
  // same condition doctor reports.
  refuseUnready([configModelReadiness(role, await runtime.config(), catalog.models, runtime.paths.configFile)])
}
