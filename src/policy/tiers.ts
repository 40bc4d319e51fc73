// Tiers: the parent's own estimate of how hard a delegation is. Cheaper agents do easy and medium work
// well; hard or uncertain work costs more in review and rework than it saves, so it stays with the
// parent. The argument is optional unless config.json sets policy.requireTier, so prompts written for
// the published arguments keep working.
import type { Refusal } from "./refusal"

export const TIERS = ["easy", "medium", "hard", "unsure"] as const
export type Tier = (typeof TIERS)[number]

export const DELEGABLE_TIERS: readonly Tier[] = ["easy", "medium"]

export function checkTier(tier: Tier | undefined, requireTier: boolean): Refusal | undefined {
  if (tier === undefined) {
    if (!requireTier) return undefined
    return {
      rule: "tier",
      message: "This server requires a tier on every delegation (config.json policy.requireTier), and none was given.",
      next:
        `Pass tier: "easy" or "medium" if the work is bounded and already designed; if it is "hard" or you are ` +
        `"unsure", do it yourself.`,
    }
  }
  if (DELEGABLE_TIERS.includes(tier)) return undefined
  return {
    rule: "tier",
    message:
      `A delegation marked tier "${tier}" is not delegated: ` +
      `${tier === "hard" ? "hard work" : "work whose difficulty is unclear"} needs the judgement of the agent that ` +
      `holds the context.`,
    next: "Do this work yourself; delegate only the bounded parts of it (tier easy or medium) once they are designed.",
  }
}
