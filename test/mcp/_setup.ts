// Shared by the MCP integration tests: one scripted model, one isolated home and (through it) one
// shared OpenCode server per test file; an in-process MCP server per runtime, reached through the
// SDK Client over an in-memory transport pair; throwaway git repositories.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import {
  ElicitRequestSchema,
  type CallToolResult,
  type ElicitRequest,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js"
import { readdir, rm } from "node:fs/promises"
import { readFlags, type Flags } from "../../src/config/flags"
import type { ConfigInput } from "../../src/config/schema"
import { Delegations } from "../../src/engine/lifecycle"
import { Runtime } from "../../src/engine/runtime"
import { createServer } from "../../src/mcp/server"
import { createRepository } from "../../src/model/demo"
import { createIsolatedHome, type IsolatedHome } from "../../src/model/home"
import { startScriptedModel, type ScriptedModel } from "../../src/model/server"
import type { ScriptInput } from "../../src/model/script"
import { stopServer } from "../../src/opencode/server"
import { TEST_PATH } from "../helpers/mcp"

export interface World {
  model: ScriptedModel
  home: IsolatedHome
  repos: string[]
}

/** `config` overrides the home's config.json (the agents are rendered from it). */
export async function startWorld(scripts: Record<string, ScriptInput>, config?: Partial<ConfigInput>): Promise<World> {
  const model = await startScriptedModel({ scripts })
  const home = await createIsolatedHome({ modelUrl: model.url, env: { PATH: TEST_PATH }, config })
  return { model, home, repos: [] }
}

export async function stopWorld(world: World | undefined) {
  if (!world) return
  await stopServer(world.home.paths)
  await world.model.stop()
  await world.home.dispose()
  for (const repo of world.repos) await rm(repo, { recursive: true, force: true })
}

export interface Connected {
  client: Client
  runtime: Runtime
  delegations: Delegations
  close(): Promise<void>
}

/** The person behind a client that declares elicitation: answers each `elicitation/create`. */
export type Person = (request: ElicitRequest, extra: { signal: AbortSignal }) => ElicitResult | Promise<ElicitResult>

export async function connect(
  world: World,
  flags: Partial<Flags> = {},
  clientName = "orchestrator-tests",
  person?: Person,
): Promise<Connected> {
  const runtime = new Runtime({ ...readFlags(world.home.env), ...flags })
  const delegations = new Delegations(runtime, { recover: true })
  const server = createServer(runtime, delegations)
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await server.connect(serverSide)
  const client = new Client({ name: clientName, version: "1" }, person ? { capabilities: { elicitation: {} } } : {})
  if (person) client.setRequestHandler(ElicitRequestSchema, (request, extra) => person(request, extra))
  await client.connect(clientSide)
  return {
    client,
    runtime,
    delegations,
    close: async () => {
      // Tasks still running in the background (a scout left `running`) settle before the server goes.
      await delegations.shutdown()
      await client.close()
      await server.close()
      runtime.close()
    },
  }
}

/** A git repository with one committed source file and one untracked file that predates every task. */
export async function makeRepo(world: World): Promise<string> {
  const dir = await createRepository("oc-orch-repo-", {
    "README.md": "# tally\n\nCounts words.\n",
    "src/tally.ts": "export function count(words: string[]) {\n  return words.length\n}\n",
  })
  world.repos.push(dir)
  await Bun.write(`${dir}/notes.txt`, "untracked before the task\n")
  return dir
}

export type Structured = Record<string, unknown> & { status: string; task_id?: string; next?: string }

export const structured = (result: unknown) => (result as CallToolResult).structuredContent as Structured
export const text = (result: unknown) =>
  (result as CallToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("\n")

export const lockFiles = async (world: World) =>
  (await readdir(world.home.paths.locksDir).catch(() => [] as string[])).filter((name) => name.endsWith(".json"))
export const taskFiles = async (world: World) =>
  (await readdir(world.home.paths.tasksDir).catch(() => [] as string[])).filter((name) => name.endsWith(".json"))
