// Where the parent clients keep their configuration and skills, from the flags the CLI read once:
// CODEX_HOME and CLAUDE_CONFIG_DIR move them, as the clients themselves do (read in config/flags.ts).
import type { Flags } from "../config/flags"
import { opencodeDotDir } from "../opencode/config-files"

export interface ClientHomes {
  home: string
  /** `${CODEX_HOME:-~/.codex}` */
  codexHome: string
  /** CLAUDE_CONFIG_DIR when set; Claude Code then keeps `.claude.json` and `skills/` there. */
  claudeConfigDir?: string
  /** PATH used to find the `codex` and `claude` executables. */
  path: string
}

export function clientHomes(flags: Pick<Flags, "home" | "codexHome" | "claudeConfigDir" | "path">): ClientHomes {
  return {
    home: flags.home,
    codexHome: flags.codexHome,
    claudeConfigDir: flags.claudeConfigDir,
    path: flags.path ?? "/usr/local/bin:/usr/bin:/bin",
  }
}

const SKILL_NAME = "orchestrate"

/** Directories that emptied-directory pruning never climbs past (ours and the clients'). */
export const pruneStops = (dataDir: string, opencodeConfigDir: string, homes: ClientHomes) => [
  dataDir,
  opencodeConfigDir,
  homes.home,
  opencodeHomeDir(homes),
  homes.codexHome,
  homes.claudeConfigDir ?? `${homes.home}/.claude`,
]

/** OpenCode's other global config dir, `~/.opencode` (its curl installer puts its binary there). */
export const opencodeHomeDir = (homes: Pick<ClientHomes, "home">) => opencodeDotDir(homes.home)

export const codexConfigFile = (homes: ClientHomes) => `${homes.codexHome}/config.toml`
// Codex 0.171 reads skills from `$CODEX_HOME/skills` and from the user's agent skills directory
// `~/.agents/skills` (checked with `codex debug prompt-input`); the latter is the documented one.
export const codexSkillFile = (homes: ClientHomes) => `${homes.home}/.agents/skills/${SKILL_NAME}/SKILL.md`
export const claudeJsonFile = (homes: ClientHomes) => `${homes.claudeConfigDir ?? homes.home}/.claude.json`
export const claudeSkillFile = (homes: ClientHomes) =>
  `${homes.claudeConfigDir ?? `${homes.home}/.claude`}/skills/${SKILL_NAME}/SKILL.md`

/** The client's executable on PATH, or null. */
export const findClient = (homes: ClientHomes, name: "codex" | "claude") => Bun.which(name, { PATH: homes.path })
