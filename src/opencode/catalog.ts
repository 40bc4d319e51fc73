// The models OpenCode can route to, as OpenCode itself reports them (never a list kept here). Two
// readers, one shape: the running server's provider list (delegation, the models tool) and
// `opencode models --verbose` (install and doctor, before any server runs). That command prints each
// model id on its own line followed by the same model JSON the server returns.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { fail } from "../errors"
import { neutralStandIn } from "../sandbox/stand-ins"
import type { Run } from "../util/process"
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

/** One model from OpenCode's JSON for it, whichever reader found it. */
function catalogModel(id: string, model: unknown): CatalogModel {
  const fields = model && typeof model === "object" ? (model as { name?: unknown; variants?: unknown }) : {}
  return {
    id,
    name: typeof fields.name === "string" ? fields.name : id.slice(id.indexOf("/") + 1),
    variants: fields.variants && typeof fields.variants === "object" ? Object.keys(fields.variants) : [],
  }
}

const byId = (models: CatalogModel[]) => models.sort((a, b) => a.id.localeCompare(b.id))

export async function readCatalog(client: OpencodeClient, directory?: string): Promise<Catalog> {
  const result = await client.config.providers({ directory }).catch(
    // Unreachable (a server that died under the read) is no catalog, as an error answer is: the caller
    // decides whether a successor is asked again (engine/capacity/runtime.ts).
    () => ({ data: undefined }),
  )
  if (!result.data) throw fail("Server", "OpenCode did not return its model catalog.")
  const models = result.data.providers.flatMap((provider) =>
    Object.entries(provider.models).map(([id, model]) => catalogModel(`${provider.id}/${id}`, model)),
  )
  return { models: byId(models), defaults: result.data.default }
}

/** The models in `opencode models --verbose` output; a model whose JSON does not parse keeps its id. */
export function parseModels(output: string): CatalogModel[] {
  const models: CatalogModel[] = []
  let id: string | undefined
  let json: string[] = []
  const flush = () => {
    if (!id) return
    let parsed: unknown
    try {
      parsed = JSON.parse(json.join("\n"))
    } catch {
      // Details that do not parse: the model is still listed, by its id alone.
    }
    models.push(catalogModel(id, parsed))
  }
  for (const line of output.split("\n")) {
    if (/^[^\s{}/][^\s]*\/\S+$/.test(line)) {
      flush()
      id = line.trim()
      json = []
    } else if (id) json.push(line)
  }
  flush()
  return byId(models)
}

/**
 * `opencode models --verbose`, run in the neutral stand-in under `standIns` (paths.opencodeDirsDir): OpenCode loads an
 * instance in its working directory and imports the plugin code it finds on the way up, so it never runs
 * in the person's (or the client's) current directory, a project an agent may have written to.
 */
export async function discoverModels(
  run: Run,
  opencode: string,
  env: Record<string, string | undefined>,
  standIns: string,
): Promise<CatalogModel[]> {
  let result: Awaited<ReturnType<Run>>
  try {
    result = await run([opencode, "models", "--verbose"], { env, timeoutMs: 120_000, cwd: neutralStandIn(standIns) })
  } catch {
    throw fail(
      "Prerequisite",
      `OpenCode (\`${opencode}\`) could not be started.`,
      "Install OpenCode (https://opencode.ai) so `opencode` is on PATH, or set OPENCODE_MCP_ORCHESTRATOR_OPENCODE " +
        "to its path.",
    )
  }
  if (result.code !== 0)
    throw fail(
      "Prerequisite",
      `\`${opencode} models --verbose\` failed (exit ${result.code}): ` +
        `${result.stderr.trim().split("\n").slice(-2).join(" ")}`,
      "Run `opencode models` yourself and fix what it reports (a provider login, the OpenCode config).",
    )
  const models = parseModels(result.stdout)
  if (models.length === 0)
    throw fail(
      "Prerequisite",
      "OpenCode lists no models.",
      "Connect a provider in OpenCode (`opencode auth login`) or configure one in opencode.json, then rerun install.",
    )
  return models
}

/** Throws a usage error naming close matches when OpenCode cannot route to the model or variant. */
export function checkRoute(catalog: Catalog, route: ModelRoute): void {
  const id = `${route.providerID}/${route.modelID}`
  const model = catalog.models.find((m) => m.id === id)
  if (!model) {
    const near = catalog.models
      .filter((m) => m.id.startsWith(`${route.providerID}/`) || m.id.includes(route.modelID))
      .slice(0, 5)
    throw fail(
      "Usage",
      `OpenCode has no model "${id}".`,
      near.length
        ? `Available near matches: ${near.map((m) => m.id).join(", ")}. Call the models tool for the full list.`
        : "Call the models tool (or `opencode-mcp-orchestrator models`) for the list OpenCode offers.",
    )
  }
  if (route.variant && !model.variants.includes(route.variant))
    throw fail(
      "Usage",
      `Model ${formatModel({ ...route, variant: undefined })} has no variant "${route.variant}".`,
      model.variants.length
        ? `Its variants: ${model.variants.join(", ")}; omit the variant to let OpenCode choose.`
        : "This model has no variants; omit the variant.",
    )
}
