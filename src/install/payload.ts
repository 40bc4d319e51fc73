// The files an installation consists of, for a config: the binary in current/, the OpenCode agents
// and plugin, and the `orchestrate` skill for each selected client. Pure: the binary's hash is given.
import type { Config } from "../config/schema"
import { type Paths, APP } from "../config/paths"
import { renderAgents } from "../agents/render"
import skill from "../templates/skills/orchestrate.md" with { type: "text" }
import { PLUGIN_TEXT } from "./plugin-text"
import { pluginDependencyFiles } from "./plugin-deps"
import { claudeSkillFile, codexSkillFile, type ClientHomes } from "./homes"
import { sha256 } from "./manifest"
import type { DesiredFile } from "./plan"

export const SKILL_TEXT: string = skill

export const installedBinary = (paths: Paths) => `${paths.current}/bin/${APP}`

/** The MCP command every client registers: the stable path under current/, never a versioned one. */
export const serveCommand = (paths: Paths) => ({ command: installedBinary(paths), args: ["serve"] })

const text = (path: string, owner: DesiredFile["owner"], content: string): DesiredFile => ({
  path,
  owner,
  sha256: sha256(content),
  mode: 0o644,
  source: { text: content },
})

export function desiredFiles(input: {
  config: Config
  paths: Paths
  homes: ClientHomes
  binary: { source: string; sha256: string }
  /** OpenCode config dirs to write what OpenCode would fetch into (plugin-deps.ts). */
  pluginDependencyDirs?: string[]
}): DesiredFile[] {
  const { config, paths, homes } = input
  const files: DesiredFile[] = [
    {
      path: installedBinary(paths),
      owner: "core",
      sha256: input.binary.sha256,
      mode: 0o755,
      source: { copy: input.binary.source },
    },
    ...renderAgents(config).map((agent) => text(`${paths.opencodeAgentsDir}/${agent.file}`, "opencode", agent.content)),
    text(paths.opencodePluginFile, "opencode", PLUGIN_TEXT),
  ]
  for (const dir of input.pluginDependencyDirs ?? [])
    for (const file of pluginDependencyFiles(dir)) files.push(text(file.path, "opencode", file.text))
  if (config.integrations.includes("codex")) files.push(text(codexSkillFile(homes), "codex", SKILL_TEXT))
  if (config.integrations.includes("claude")) files.push(text(claudeSkillFile(homes), "claude", SKILL_TEXT))
  return files
}
