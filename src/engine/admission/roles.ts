// A call's `role`: one the person defined (config.json, a Claude Code subagent file), run by the tool
// whose profile it has — a read-only role through scout, a write role through worker — so the sandbox,
// the permissions and every check are that tool's, and the role brings only its prompt and its model.
// The prompt reaches the session as its system text on every turn; it is read when the task starts and
// kept on the task's record, so a continue or a takeover runs the same role.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { realpath } from "node:fs/promises"
import { fail } from "../../errors"
import { listRoles, MAX_PROMPT_BYTES, readBounded, type RoleCatalog, type RoleSpec } from "../../roles/catalog"
import { PROFILE_TOOL } from "../../config/role-names"
import type { Runtime } from "../capacity"

/** The roles a call in `cwd` may name (roles/catalog.ts), with cwd resolved as the workspace opt-in compares it. */
export async function rolesAt(runtime: Runtime, cwd: string): Promise<RoleCatalog> {
  // A cwd that does not resolve is matched as written: it opts into nothing it is not named as (admission
  // refuses it later, with its own reason).
  const real = await realpath(cwd).catch(() => cwd)
  return listRoles(await runtime.config(), runtime.paths.home, real)
}

/** The role `name` for a call of `tool` in `cwd`, or a refusal naming what to do instead. */
export async function resolveUserRole(
  runtime: Runtime,
  tool: "scout" | "worker",
  name: string,
  cwd: string,
): Promise<RoleSpec> {
  const catalog = await rolesAt(runtime, cwd)
  const role = catalog.roles.find((role) => role.name === name)
  if (!role) {
    const refused = catalog.refused.find((role) => role.name === name)
    if (refused)
      throw fail(
        "Usage",
        `The role "${name}" (${refused.source}) cannot run: ${refused.reason}.`,
        "Fix that file, or call without role; the policy tool lists the roles that run here.",
      )
    const known = catalog.roles.map((role) => role.name)
    const named = known.length > 10 ? `${known.slice(0, 10).join(", ")} (the policy tool lists all)` : known.join(", ")
    throw fail(
      "Usage",
      `There is no role "${name.slice(0, 60)}" for ${cwd}.`,
      known.length
        ? `Pass one of ${named}, or call without role.`
        : "No roles are defined: define them under roles in config.json (docs/roles.md), or call without role.",
    )
  }
  const fits = PROFILE_TOOL[role.profile]
  if (fits !== tool)
    throw fail(
      "Usage",
      `The role "${name}" has the ${role.profile} profile, which ${tool} does not run.`,
      `Call ${fits} with role "${name}".`,
    )
  return role
}

/** The role's prompt, read now: its file, the OpenCode agent's prompt on the shared server, or its own text. */
export async function rolePrompt(client: OpencodeClient, directory: string, role: RoleSpec): Promise<string> {
  const { prompt } = role
  let text: string
  if (prompt.kind === "text") text = prompt.text
  else if (prompt.kind === "file") {
    const read = await readBounded(prompt.path, MAX_PROMPT_BYTES)
    if (read.text === undefined)
      throw fail(
        "Config",
        `The prompt file of role "${role.name}", ${prompt.path}, cannot be used: ${read.problem}.`,
        `Fix the file, or roles.${role.name}.prompt in config.json.`,
      )
    text = read.text
  } else {
    const agents = await client.app.agents({ directory })
    const agent = agents.data?.find((agent) => agent.name === prompt.agent)
    if (!agent)
      throw fail(
        "Config",
        `Role "${role.name}" follows the OpenCode agent "${prompt.agent}", which OpenCode's global config does ` +
          "not define.",
        "Define that agent in ~/.config/opencode (an agent file or opencode.json; a project's agents are not " +
          `loaded), or fix roles.${role.name}.agent in config.json.`,
      )
    text = agent.prompt ?? ""
  }
  if (!text.trim())
    throw fail("Config", `Role "${role.name}" has an empty prompt.`, "Write its prompt, or remove the role.")
  if (Buffer.byteLength(text) > MAX_PROMPT_BYTES)
    throw fail(
      "Config",
      `Role "${role.name}"'s prompt is longer than ${MAX_PROMPT_BYTES} bytes.`,
      "Shorten it: it is sent with every turn.",
    )
  return text
}
