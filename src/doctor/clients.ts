// Doctor's checks of the parent clients this program registered with: Codex's MCP table and Claude
// Code's user-scoped server, each with its timeout, and the skill file installed beside each.
import { timeoutLimits } from "../config/schema"
import { claudeJsonFile, claudeSkillFile, codexConfigFile, codexSkillFile } from "../install/homes"
import { readClaudeEntry } from "../install/integrations/claude"
import { readCodexEntry } from "../install/integrations/codex"
import { hashFile, sha256 } from "../install/manifest"
import { readText } from "../install/observe"
import { installedBinary, SKILL_TEXT } from "../install/payload"
import { SERVER_NAME } from "../version"
import { failed, pass, REINSTALL, type Check, type CheckResult } from "./check"

async function skill(id: string, path: string): Promise<CheckResult> {
  const hash = await hashFile(path)
  if (!hash) return failed(id, `${path} is missing.`, REINSTALL)
  // A skill is guidance the user may tailor; an edited one is theirs and still a skill.
  if (hash !== sha256(SKILL_TEXT)) return pass(id, `${path} (edited locally; kept as you changed it)`)
  return pass(id, path)
}

export const codex: Check = async (ctx) => {
  if (!ctx.config!.integrations.includes("codex")) return []
  const file = ctx.manifest?.registrations.codex?.configFile ?? codexConfigFile(ctx.homes)
  const parent = timeoutLimits(ctx.config!).parent
  const command = installedBinary(ctx.paths)
  const text = await readText(file)
  const entry = text === undefined ? undefined : readCodexEntry(text, file)
  const results = [await skill("codex:skill", codexSkillFile(ctx.homes))]
  if (!entry) return [failed("codex:mcp", `${file} has no [mcp_servers.${SERVER_NAME}].`, REINSTALL), ...results]
  if (entry.command !== command || !Bun.deepEquals(entry.args, ["serve"]))
    return [
      failed("codex:mcp", `${SERVER_NAME} runs ${String(entry.command)}, not ${command} serve.`, REINSTALL),
      ...results,
    ]
  if (entry.tool_timeout_sec !== parent)
    return [
      failed(
        "codex:mcp",
        `Codex tool_timeout_sec is ${String(entry.tool_timeout_sec ?? "unset (60)")}, but the config's parent ` +
          `deadline is ${parent}s.`,
        `Rerun \`opencode-mcp-orchestrator install --yes\` (it sets mcp_servers.${SERVER_NAME}.tool_timeout_sec = ` +
          `${parent} in ${file}).`,
      ),
      ...results,
    ]
  return [pass("codex:mcp", `${file}: ${command} serve, tool_timeout_sec ${parent}`), ...results]
}

export const claude: Check = async (ctx) => {
  if (!ctx.config!.integrations.includes("claude")) return []
  const file = claudeJsonFile(ctx.homes)
  const parent = timeoutLimits(ctx.config!).parent
  const command = installedBinary(ctx.paths)
  const results = [await skill("claude:skill", claudeSkillFile(ctx.homes))]
  let entry: Awaited<ReturnType<typeof readClaudeEntry>>
  try {
    entry = await readClaudeEntry(file)
  } catch (error) {
    return [
      failed(
        "claude:mcp",
        error instanceof Error ? error.message : String(error),
        "Repair the file, then rerun install.",
      ),
      ...results,
    ]
  }
  if (!entry)
    return [failed("claude:mcp", `${file} has no user-scoped MCP server ${SERVER_NAME}.`, REINSTALL), ...results]
  if (entry.command !== command)
    return [
      failed("claude:mcp", `${SERVER_NAME} runs ${String(entry.command)}, not ${command}.`, REINSTALL),
      ...results,
    ]
  if (entry.timeout !== parent * 1000)
    return [
      failed(
        "claude:mcp",
        `Claude Code timeout is ${String(entry.timeout ?? "unset")} ms, but the config's parent deadline is ` +
          `${parent * 1000} ms.`,
        REINSTALL,
      ),
      ...results,
    ]
  return [pass("claude:mcp", `${file}: ${command} serve, timeout ${parent * 1000} ms`), ...results]
}
