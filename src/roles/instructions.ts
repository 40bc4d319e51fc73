// The roles the person defined, one line each, for the instructions a parent reads when it connects:
// config.json's and the person's own Claude Code subagents (a workspace's opted-in ones depend on the
// cwd, so only the policy tool lists them). Read when `serve` starts, before any zod schema loads, so
// config.json is read as plain JSON here: a file the schema would refuse lists nothing from config.json
// (every delegation is refused with the schema's reasons anyway), and a role it cannot run is left out.
import { readFile } from "node:fs/promises"
import { ROLE_NAME, ROLE_PROFILES, PROFILE_TOOL, type RoleProfile } from "../config/role-names"
import type { Config } from "../config/schema"
import { listRoles } from "./catalog"

/** The most roles the instructions name; the policy tool lists every one. */
const MAX_LISTED = 20
/** The longest description a line carries. */
const MAX_DESCRIPTION = 120

/** The lines to append to the server instructions; empty when the person defined no role. */
export async function roleInstructions(home: string, configFile: string): Promise<string> {
  const config = await plainConfig(configFile)
  const { roles } = await listRoles(config, home)
  if (!roles.length) return ""
  const lines = roles.slice(0, MAX_LISTED).map((role) => {
    const description =
      role.description.length > MAX_DESCRIPTION
        ? `${role.description.slice(0, MAX_DESCRIPTION - 1)}…`
        : role.description
    return `- \`${role.name}\` (${PROFILE_TOOL[role.profile]}): ${description}`
  })
  const more = roles.length > MAX_LISTED ? [`- and ${roles.length - MAX_LISTED} more: \`policy\` lists them.`] : []
  // After the instructions' own last line (they end with a newline): a blank line, then the section.
  return `\nRoles the person defined (\`role\` on the tool named):\n${[...lines, ...more].join("\n")}\n`
}

/** config.json's roles and claudeAgents as far as plain JSON gives them; anything else counts as absent. */
async function plainConfig(file: string): Promise<Pick<Config, "roles" | "claudeAgents">> {
  const fallback = { roles: {}, claudeAgents: { user: true, workspaces: [] } }
  let parsed: unknown
  try {
    parsed = JSON.parse(await readFile(file, "utf8"))
  } catch {
    // No config.json (or one that does not parse): the person's subagents are still theirs to list.
    return fallback
  }
  const raw = parsed as { roles?: unknown; claudeAgents?: { user?: unknown } }
  const roles: Config["roles"] = {}
  if (raw.roles && typeof raw.roles === "object")
    for (const [name, role] of Object.entries(raw.roles as Record<string, Record<string, unknown>>)) {
      const profile = role?.profile as RoleProfile
      if (!ROLE_NAME.test(name) || !ROLE_PROFILES.includes(profile) || typeof role?.description !== "string") continue
      // A listing reads no prompt: where it comes from does not matter here.
      roles[name] = { profile, description: role.description, prompt: "/" }
    }
  return { roles, claudeAgents: { user: raw.claudeAgents?.user !== false, workspaces: [] } }
}
