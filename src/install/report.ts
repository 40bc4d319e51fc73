// What a plan will do (or did), as lines for a person: `--dry-run` prints this and stops.
import { type Config, ROLES } from "../config/schema"
import { SERVER_NAME } from "../version"
import type { ClientStep, FileStep, InstallPlan, UninstallPlan } from "./plan"

const CLIENT = { codex: "Codex", claude: "Claude Code" } as const

function describeFile(step: FileStep, home: string): string {
  const short = (path: string) => (path.startsWith(`${home}/`) ? `~${path.slice(home.length)}` : path)
  switch (step.action) {
    case "write":
      return `  write    ${short(step.file.path)}${step.reason === "update" ? " (update)" : ""}`
    case "keep":
      return `  keep     ${short(step.file.path)} (already up to date)`
    case "preserve":
      return (
        `  PRESERVE ${short(step.file.path)}: ${step.reason}; not overwritten. Move it aside and rerun ` +
        `install to get the new version.`
      )
    case "remove":
      return `  remove   ${short(step.path)}`
    case "leave":
      return `  LEAVE    ${short(step.path)}: ${step.reason}; it is yours now and was not removed.`
  }
}

function describeClient(step: ClientStep, claudeFound: boolean): string {
  const name = CLIENT[step.client]
  switch (step.action) {
    case "register": {
      const extras = [
        `timeout ${step.entry.timeoutSec}s`,
        ...(step.client === "claude" && step.entry.alwaysLoad ? ["alwaysLoad: tools up front"] : []),
        ...(step.client === "codex" && step.entry.approveTools ? ["tools approved: no prompt per call"] : []),
      ]
      const replacing = step.replacing ? `, replacing one that ran ${step.replacing}` : ""
      const command = `${step.entry.command} ${step.entry.args.join(" ")}`
      return `  register ${name} MCP server ${SERVER_NAME} → ${command} (${extras.join(", ")})${replacing}`
    }
    case "unchanged":
      return `  keep     ${name} MCP server ${SERVER_NAME} (already registered)`
    case "unregister":
      if (step.client === "claude" && !claudeFound)
        return (
          `  LEAVE    Claude Code MCP server ${SERVER_NAME} (${step.reason}): the claude CLI is not on PATH; ` +
          `remove it with \`claude mcp remove --scope user ${SERVER_NAME}\`.`
        )
      return (
        `  remove   ${name} MCP server ${SERVER_NAME} (${step.reason}); the rest of ${name}'s configuration ` +
        `is not touched`
      )
    case "foreign":
      return (
        `  LEAVE    ${name} MCP server ${SERVER_NAME}: it runs ${step.command}, which this installation did ` +
        `not write.`
      )
  }
}

export function formatInstallPlan(plan: InstallPlan, home: string, claudeFound: boolean): string[] {
  const removed = plan.clients.filter((step) => step.action === "unregister").map((step) => CLIENT[step.client])
  return [
    ...(removed.length ? [`Deselected integrations will be removed: ${removed.join(", ")}.`] : []),
    "Files:",
    ...plan.files.map((step) => describeFile(step, home)),
    "Clients:",
    ...(plan.clients.length ? plan.clients.map((step) => describeClient(step, claudeFound)) : ["  (none selected)"]),
  ]
}

export function formatUninstallPlan(
  plan: UninstallPlan,
  home: string,
  claudeFound: boolean,
  configFile: string,
): string[] {
  return [
    "Files:",
    ...(plan.files.length ? plan.files.map((step) => describeFile(step, home)) : ["  (no installed files found)"]),
    "Clients:",
    ...(plan.clients.length
      ? plan.clients.map((step) => describeClient(step, claudeFound))
      : ["  (no registrations found)"]),
    plan.purgeConfig ? `  remove   ${configFile}` : `  keep     ${configFile} (pass --purge-config to remove it)`,
  ]
}

export const preservedCount = (files: FileStep[]) =>
  files.filter((step) => step.action === "preserve" || step.action === "leave").length

/**
 * One line per role config.json leaves on OpenCode's default model, and how to choose one: without
 * the wizard nothing else would say that every delegation runs on whatever OpenCode defaults to.
 */
export function defaultModelNotes(config: Pick<Config, "models">): string[] {
  const how = "(`opencode-mcp-orchestrator models` lists them) or run `install` on a terminal."
  const choose = (role: string) => `choose one with --models ${role}=PROVIDER/MODEL ${how}`
  const note = (role: string) => `Model: ${role} stays on OpenCode's default model; ${choose(role)}`
  return ROLES.filter((role) => !config.models[role]).map(note)
}
