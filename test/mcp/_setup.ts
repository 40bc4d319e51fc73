// Shared by the MCP integration tests: one scripted model, one isolated home and (through it) one
// shared OpenCode server per test file; an in-process MCP server per runtime, reached through the
// SDK Client over an in-memory transport pair; throwaway git repositories.
import type { Client, CallToolResult } from "@modelcontextprotocol/client"
import { readFlags, type Flags } from "../../src/config/flags"
import type { ConfigInput } from "../../src/config/schema"
import type { Delegations } from "../../src/engine/lifecycle"
import { Runtime } from "../../src/engine/capacity/runtime"
import type { ScriptInput } from "../../src/model/script"
import { serveInProcess, type Person } from "../helpers/in-process"
import { textOf } from "../helpers/mcp"
import { jsonFiles } from "../helpers/records"
import { commitRepo } from "../helpers/git"
import { repository, type RepositoryOptions, startHome, stopHome, type HomeWorld } from "../helpers/world"

export type { Person }
export type World = HomeWorld

/** `config` overrides the home's config.json (the agents are rendered from it). */
export const startWorld = (scripts: Record<string, ScriptInput>, config?: Partial<ConfigInput>): Promise<World> =>
  startHome(scripts, { config })

export const stopWorld = stopHome

export interface Connected {
  client: Client
  runtime: Runtime
  delegations: Delegations
  close(): Promise<void>
}

export async function connect(
  world: World,
  flags: Partial<Flags> = {},
  clientName = "orchestrator-tests",
  person?: Person,
): Promise<Connected> {
  const runtime = new Runtime({ ...readFlags(world.home.env), ...flags })
  const served = await serveInProcess(runtime, clientName, person)
  return {
    client: served.client,
    runtime,
    delegations: served.delegations,
    close: async () => {
      await served.close()
      runtime.close()
    },
  }
}

/**
 * A git repository with one committed source file and one untracked file that predates every task, at a
 * path an earlier test's repository may have had (test/helpers/world.ts `repository`).
 */
export const makeRepo = (world: World, options?: RepositoryOptions): Promise<string> =>
  repository(
    world,
    "oc-orch-repo-",
    async (dir) => {
      await commitRepo(
        dir,
        {
          "README.md": "# tally\n\nCounts words.\n",
          "src/tally.ts": "export function count(words: string[]) {\n  return words.length\n}\n",
        },
        "initial",
      )
      await Bun.write(`${dir}/notes.txt`, "untracked before the task\n")
    },
    options,
  )

export type Structured = Record<string, unknown> & { status: string; task_id?: string; next?: string }

/** The result's structured content; a result without one (an error) fails the test with what the tool said. */
export function structured(result: unknown): Structured {
  const content = (result as CallToolResult).structuredContent
  if (content === undefined) throw new Error(`no structured content; the tool answered: ${text(result).slice(0, 2000)}`)
  return content as Structured
}
export const text = (result: unknown) => textOf(result as CallToolResult)

export const lockFiles = (world: World) => jsonFiles(world.home.paths.locksDir)
export const taskFiles = (world: World) => jsonFiles(world.home.paths.tasksDir)
