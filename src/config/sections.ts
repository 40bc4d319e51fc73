// Two sections of config.json with rules of their own (schema.ts composes them): a trusted root the
// sandbox mounts, and the policy every call meets.
import { z } from "zod"
import { MODES } from "../policy/mode"
import { RELAYABLE } from "../policy/relay"
import { roleName } from "./roles"

export const TrustedRootSchema = z
  .object({
    root: z.string().startsWith("/", "an absolute path").describe("A directory mounted read-only in every sandbox."),
    pathEntries: z.array(z.string()).default([]).describe("Directories under root added to PATH."),
    environment: z.record(z.string(), z.string()).default({}).describe("Variables set to paths relative to root."),
  })
  .strict()

// Added without a version bump: every field is optional with a default, so a config.json written before
// it stays valid and means what it meant (blueprint mode, tier optional, every ask refused).
export const PolicySchema = z
  .object({
    mode: z
      .enum(MODES)
      .optional()
      .describe(
        "Mode for every workspace unless a call, OPENCODE_MCP_ORCHESTRATOR_MODE or a marker file says otherwise; " +
          "sensitive stated anywhere wins.",
      ),
    requireTier: z
      .boolean()
      .default(false)
      .describe("When true, scout, worker and runner calls without a tier are refused."),
    relay: z
      .array(z.enum(RELAYABLE))
      .default([])
      .describe(
        "Asks a delegated agent may put to the person through the parent's MCP client (elicitation) while its tool " +
          "call waits: question (the agent may ask), webfetch, websearch (each fetch or search is asked). Shell " +
          "and sandbox tools are never relayable.",
      ),
    respondWaitSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(600)
      .describe(
        "How long a relayable question no person could be asked (no elicitation, or the call returned) waits " +
          "for the parent's task_respond before it is dismissed; 0 dismisses it at once.",
      ),
    roles: z
      .object({
        blueprint: z.array(roleName).optional(),
        sensitive: z.array(roleName).optional(),
        insensitive: z.array(roleName).optional(),
      })
      .strict()
      .optional()
      .describe(
        "Per mode, the only roles a call may name there; a mode left out allows every role (in sensitive mode a " +
          "write role still needs mechanical: true, as a worker does).",
      ),
  })
  .strict()
