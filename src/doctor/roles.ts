// The roles the person defined, as doctor sees them without a workspace: config.json's (each prompt file
// readable) and the person's Claude Code subagent files (each a role, or the reason it is not). A subagent
// file that is not a role fails nothing: it may be written for Claude Code's own tools, and stays Claude
// Code's. An OpenCode agent a role follows is looked up on the shared server when a call runs it.
import { PROFILE_TOOL } from "../config/role-names"
import { listRoles, MAX_PROMPT_BYTES, readBounded } from "../roles/catalog"
import { failed, pass, type Check, type CheckResult } from "./check"

export const roles: Check = async (ctx) => {
  const catalog = await listRoles(ctx.config!, ctx.paths.home)
  const results: CheckResult[] = []
  for (const role of catalog.roles) {
    if (role.prompt.kind !== "file") continue
    const read = await readBounded(role.prompt.path, MAX_PROMPT_BYTES)
    if (read.text === undefined)
      results.push(
        failed(
          "roles",
          `The prompt file of role "${role.name}", ${role.prompt.path}: ${read.problem}.`,
          `Fix the file, or roles.${role.name}.prompt in ${ctx.paths.configFile}.`,
        ),
      )
  }
  if (results.length) return results
  const listed = catalog.roles.map((role) => `${role.name} (${PROFILE_TOOL[role.profile]})`)
  const refused = catalog.refused.map((role) => `${role.source}: ${role.reason}`)
  const detail = [
    listed.length ? listed.join(", ") : "no roles of your own",
    ...(refused.length ? [`not roles here: ${refused.join("; ")}`] : []),
  ].join("; ")
  return [pass("roles", detail)]
}
