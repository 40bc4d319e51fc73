// The roles a call in a workspace may name: config.json's `roles`, then the person's Claude Code subagents
// (~/.claude/agents/*.md, unless config turns them off), then a workspace's own `.claude/agents/*.md` where
// config.json opts that workspace in. A name config.json defines is never taken by a subagent file. Each
// role either resolves to what a delegation needs, or is listed with the reason it cannot run.
import { constants } from "node:fs"
import { open, readdir, realpath } from "node:fs/promises"
import { join, relative } from "node:path"
import type { Config } from "../config/schema"
import type { RoleProfile } from "../config/role-names"
import { mapClaudeAgent, MAX_AGENT_FILE_BYTES } from "./claude-agent"

/** The largest prompt a role's markdown file may hold. */
export const MAX_PROMPT_BYTES = 64 * 1024

/** The most subagent files read from one directory. */
const MAX_AGENT_FILES = 200

/** Where a role's prompt comes from: read when a call runs it, not when it is listed. */
export type PromptSource =
  | { kind: "agent"; agent: string }
  | { kind: "file"; path: string }
  | { kind: "text"; text: string }

export interface RoleSpec {
  name: string
  profile: RoleProfile
  description: string
  /** Where it was defined, for the parent and the person: config.json, or a subagent file's path. */
  source: string
  prompt: PromptSource
  /** The models the role names, in order; empty: the OpenCode agent's own, else the profile's route. */
  models: string[]
  variant?: string
  timeoutS?: number
  notes: string[]
}

export interface RefusedRole {
  name: string
  source: string
  reason: string
}

export interface RoleCatalog {
  roles: RoleSpec[]
  refused: RefusedRole[]
}

/** The roles for a call whose (canonical) workspace is `cwd`; without one, those every workspace has. */
export async function listRoles(
  config: Pick<Config, "roles" | "claudeAgents">,
  home: string,
  cwd?: string,
): Promise<RoleCatalog> {
  const roles: RoleSpec[] = Object.entries(config.roles).map(([name, role]) => ({
    name,
    profile: role.profile,
    description: role.description,
    source: "config.json",
    prompt: role.agent !== undefined ? { kind: "agent", agent: role.agent } : { kind: "file", path: role.prompt! },
    models: role.model === undefined ? [] : typeof role.model === "string" ? [role.model] : [...role.model],
    variant: role.variant,
    timeoutS: role.timeout,
    notes: [],
  }))
  const refused: RefusedRole[] = []
  const dirs = [
    ...(config.claudeAgents.user ? [join(home, ".claude", "agents")] : []),
    ...(cwd ? await optedIn(config.claudeAgents.workspaces, cwd) : []).map((dir) => join(dir, ".claude", "agents")),
  ]
  for (const dir of dirs)
    for (const { path, text, problem } of await agentFiles(dir)) {
      const fallbackName = path.split("/").at(-1)!.replace(/\.md$/, "")
      if (problem) {
        refused.push({ name: fallbackName, source: path, reason: problem })
        continue
      }
      const mapped = mapClaudeAgent(text!)
      if (!mapped.ok) {
        refused.push({ name: mapped.name ?? fallbackName, source: path, reason: mapped.reason })
        continue
      }
      const { agent } = mapped
      // config.json's definition, and the person's own subagent before a workspace's, keep the name.
      if (roles.some((role) => role.name === agent.name)) continue
      roles.push({
        name: agent.name,
        profile: agent.profile,
        description: agent.description,
        source: path,
        prompt: { kind: "text", text: agent.prompt },
        models: agent.model ? [agent.model] : [],
        notes: agent.notes,
      })
    }
  return { roles, refused }
}

/** The opted-in directories `cwd` lies in (either side canonical, so a link to a workspace counts as it). */
async function optedIn(workspaces: string[], cwd: string): Promise<string[]> {
  const found: string[] = []
  for (const dir of workspaces) {
    // An opted-in directory that is gone opts nothing in.
    const real = await realpath(dir).catch(() => undefined)
    if (real && !relative(real, cwd).startsWith("..") && !relative(real, cwd).startsWith("/")) found.push(real)
  }
  return found
}

/** The `*.md` files of `dir` (none when it is absent), each read or with why it could not be. */
async function agentFiles(dir: string): Promise<{ path: string; text?: string; problem?: string }[]> {
  // No folder (most people have none), or one that cannot be listed: no subagent files there.
  const names = await readdir(dir).catch(() => [] as string[])
  const files = names
    .filter((name) => name.endsWith(".md"))
    .sort()
    .slice(0, MAX_AGENT_FILES)
  return Promise.all(
    files.map(async (name) => {
      const path = join(dir, name)
      const read = await readBounded(path, MAX_AGENT_FILE_BYTES)
      return { path, ...read }
    }),
  )
}

/**
 * A regular file's text, at most `max` bytes, or why it cannot be read: opened without following a link or
 * blocking, so a FIFO or a link planted in its place neither hangs the call nor reads another file.
 */
export async function readBounded(path: string, max: number): Promise<{ text?: string; problem?: string }> {
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ELOOP") return { problem: "it is a symbolic link, not a file" }
    if (code === "ENOENT") return { problem: "it does not exist" }
    return { problem: `it cannot be opened (${code ?? (error as Error).message})` }
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) return { problem: "it is not a regular file" }
    if (info.size > max) return { problem: `it is ${info.size} bytes, more than ${max}` }
    return { text: await handle.readFile("utf8") }
  } catch (error) {
    return { problem: `it cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})` }
  } finally {
    await handle.close()
  }
}
