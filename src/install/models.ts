// The models and variants the user's OpenCode offers, read from `opencode models --verbose` (never a
// list kept here). That command prints each model id on its own line followed by its JSON, whose
// `variants` object names the model's variants.
import { fail } from "../errors"
import type { Run } from "../util/process"

export interface ModelInfo {
  id: string
  variants: string[]
}

export function parseModels(output: string): ModelInfo[] {
  const models: ModelInfo[] = []
  let id: string | undefined
  let json: string[] = []
  const flush = () => {
    if (!id) return
    let variants: string[] = []
    try {
      const parsed: unknown = JSON.parse(json.join("\n"))
      if (parsed && typeof parsed === "object" && "variants" in parsed && parsed.variants && typeof parsed.variants === "object")
        variants = Object.keys(parsed.variants)
    } catch {}
    models.push({ id, variants })
  }
  for (const line of output.split("\n")) {
    if (/^[^\s{}/][^\s]*\/\S+$/.test(line)) {
      flush()
      id = line.trim()
      json = []
    } else if (id) json.push(line)
  }
  flush()
  return models.sort((a, b) => a.id.localeCompare(b.id))
}

export async function discoverModels(run: Run, opencode: string, env: Record<string, string | undefined>): Promise<ModelInfo[]> {
  let result
  try {
    result = await run([opencode, "models", "--verbose"], { env, timeoutMs: 120_000 })
  } catch {
    throw fail("Prerequisite", `OpenCode (\`${opencode}\`) could not be started.`, "Install OpenCode (https://opencode.ai) so `opencode` is on PATH, or set OPENCODE_MCP_ORCHESTRATOR_OPENCODE to its path.")
  }
  if (result.code !== 0)
    throw fail("Prerequisite", `\`${opencode} models --verbose\` failed (exit ${result.code}): ${result.stderr.trim().split("\n").slice(-2).join(" ")}`, "Run `opencode models` yourself and fix what it reports (a provider login, the OpenCode config).")
  const models = parseModels(result.stdout)
  if (models.length === 0) throw fail("Prerequisite", "OpenCode lists no models.", "Connect a provider in OpenCode (`opencode auth login`) or configure one in opencode.json, then rerun install.")
  return models
}
