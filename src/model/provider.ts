// The OpenCode config fragment that points OpenCode at a scripted model. OpenCode bundles
// `@ai-sdk/openai-compatible`, so this works offline; `enabled_providers` keeps the built-in
// `opencode` provider from being connected as well.
import { SCRIPTED_MODELS } from "./server"

export const SCRIPTED_PROVIDER = "scripted"

export interface ProviderModel {
  name: string
  tool_call: boolean
  limit: { context: number; output: number }
}

export interface ScriptedProviderConfig {
  model: string
  small_model: string
  enabled_providers: string[]
  provider: Record<
    string,
    {
      name: string
      npm: string
      options: { baseURL: string; apiKey: string }
      models: Record<string, ProviderModel>
    }
  >
}

export interface ProviderOptions {
  /** Model ids to declare (default `fast`, `second`); the first is the default and small model. */
  models?: readonly string[]
  provider?: string
  /**
   * More providers served by the same scripted model: model ids by provider id. Naming a built-in
   * provider overrides it, so `{ opencode: ["muse-spark-test"] }` makes `opencode/muse-spark-test`
   * reach the scripted model with OpenCode treating it as its Zen provider (the API key in the
   * override keeps OpenCode from hiding its models as paid ones).
   */
  more?: Record<string, readonly string[]>
}

const providerEntry = (url: string, models: readonly string[]) => ({
  name: "Scripted model",
  npm: "@ai-sdk/openai-compatible",
  options: { baseURL: url, apiKey: "scripted" },
  models: Object.fromEntries(
    models.map((id) => [
      id,
      { name: `Scripted ${id}`, tool_call: true, limit: { context: 200_000, output: 8_192 } } satisfies ProviderModel,
    ]),
  ),
})

/** Config for `OPENCODE_CONFIG_CONTENT` or an opencode.json: `scripted/fast` by default. */
export function opencodeProviderConfig(url: string, options: ProviderOptions = {}): ScriptedProviderConfig {
  const provider = options.provider ?? SCRIPTED_PROVIDER
  const models = options.models ?? SCRIPTED_MODELS
  const first = models[0] ?? "fast"
  const more = Object.entries(options.more ?? {})
  return {
    model: `${provider}/${first}`,
    small_model: `${provider}/${first}`,
    enabled_providers: [provider, ...more.map(([id]) => id)],
    provider: {
      [provider]: providerEntry(url, models),
      ...Object.fromEntries(more.map(([id, ids]) => [id, providerEntry(url, ids)])),
    },
  }
}
