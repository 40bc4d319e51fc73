// Provider quirks, scoped to the orchestrator's agents on OpenCode Console/Zen Muse Spark models
// (`opencode/muse-spark-*`; upstream anomalyco/opencode#48741). OpenCode 1.18.33 replays every
// reasoning part of an earlier step of the same model with its provider metadata
// (MessageV2.toModelMessages); Zen serves Muse Spark through @ai-sdk/openai, which turns that into a
// `reasoning` item carrying the caller-bound `encrypted_content`, and Console may reject it after tool
// use. So for those sessions the hidden reasoning is left out of every later request; visible text
// and tool history stay, and the session itself keeps the reasoning. Ordinary OpenCode sessions and
// other models are untouched.
//
// The other half of the upstream workaround, dropping `tool_choice: "none"` on the final tool-less
// step, has nothing to do in OpenCode 1.18.33 and no hook to do it with: its prompt loop
// (SessionPrompt.run) passes a tool choice only for JSON-schema output ("required"), still offers
// the tools on the last allowed step (adding only the "MAXIMUM STEPS REACHED" message), and the AI
// SDK then sends `tool_choice: "auto"`. `chat.params` sets sampling and provider options, which the
// SDKs validate or place before their own `tool_choice`; only a replaced provider `fetch` could reach
// the field, for every session on the provider. test/plugin/muse.test.ts pins that request shape.
import { isOrchestratorAgent } from "./roles"
import type { ChatMessage, ModelRef } from "./types"

export const isMuseSpark = (model: ModelRef | undefined) =>
  model?.providerID === "opencode" && model.modelID.startsWith("muse-spark")

/**
 * Removes reasoning parts from the assistant messages of a request about to be sent, when its latest
 * user message (whose agent and model OpenCode uses for the request) is one of ours on Muse Spark.
 * Edits `messages` in place: OpenCode 1.18.33 reads its own array after the hook, not a replacement.
 * Returns how many parts it left out.
 */
export function omitHiddenReasoning(messages: ChatMessage[]): number {
  const user = messages.findLast((message) => message.info.role === "user")
  if (!user || !isOrchestratorAgent(user.info.agent) || !isMuseSpark(user.info.model)) return 0
  let omitted = 0
  for (const message of messages) {
    if (message.info.role !== "assistant") continue
    const kept = message.parts.filter((part) => part.type !== "reasoning")
    omitted += message.parts.length - kept.length
    if (kept.length !== message.parts.length) message.parts = kept
  }
  return omitted
}
