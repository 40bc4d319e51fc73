// The roles the person defines in config.json: a name the parent passes as `role` to scout or worker,
// with the prompt the delegated agent follows (one of the person's OpenCode agents, or a markdown
// file) and the sandbox profile it runs under, which the product enforces whatever that prompt or
// agent says. Claude Code subagent files become roles too (src/roles); `claudeAgents` says whose.
import { z } from "zod"
import { RESERVED_ROLE_NAMES, ROLE_NAME, ROLE_PROFILES } from "./role-names"

export const roleName = z
  .string()
  .regex(ROLE_NAME, "a role name is lower case letters, digits and hyphens, starting with a letter, at most 40")
  .refine((name) => !(RESERVED_ROLE_NAMES as readonly string[]).includes(name), "that name is a built-in role's")

const modelId = z.string().regex(/^[^/\s]+\/\S+$/, "a model is written provider/model, as `opencode models` lists it")

export const RoleSchema = z
  .object({
    agent: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "An agent of your OpenCode global config whose prompt this role follows (its permissions do not apply).",
      ),
    prompt: z
      .string()
      .startsWith("/", "an absolute path")
      .optional()
      .describe("An absolute path to a markdown file with the role's prompt."),
    profile: z.enum(ROLE_PROFILES).describe("read-only runs as a scout does; write as a worker does."),
    model: z
      .union([modelId, z.array(modelId).min(1).max(8)])
      .optional()
      .describe("Model, or an ordered list of them; absent: the OpenCode agent's own, else the profile's route."),
    variant: z.string().min(1).optional().describe("Variant of that model, as OpenCode lists it."),
    timeout: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Seconds a call of this role may run when it states no timeout_seconds; within the profile's budget."),
    description: z.string().min(1).max(200).describe("One line the parent reads to choose the role."),
  })
  .strict()
  .refine((role) => (role.agent === undefined) !== (role.prompt === undefined), {
    message: "a role names exactly one of agent (an OpenCode agent) and prompt (a markdown file)",
  })
export type RoleConfig = z.infer<typeof RoleSchema>

export const RolesSchema = z.record(roleName, RoleSchema)

export const ClaudeAgentsSchema = z
  .object({
    user: z.boolean().default(true).describe("Read ~/.claude/agents/*.md as roles."),
    workspaces: z
      .array(z.string().startsWith("/", "an absolute path"))
      .default([])
      .describe(
        "Directories whose .claude/agents/*.md are read as roles for a cwd inside them; any other workspace's are " +
          "never read (an agent could have written them).",
      ),
  })
  .strict()
