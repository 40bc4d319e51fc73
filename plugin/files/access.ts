// What every replaced file tool does before and after its work: who may call it (the orchestrator's
// agents; only the worker writes), the session's permission rules, the sandbox access for this
// call, and how its answer and its refusals reach the model.
import { agentName } from "../../src/agents/names"
import { readInvocation } from "../env"
import { isOrchestratorAgent } from "../roles"
import type { ToolContext, ToolOutput } from "../types"
import { FileError, readPath, type FileAccess } from "./io"
import { EditError, workspaceRelative } from "./text"

/** The one agent that may change files through these tools. */
const WRITER = agentName("worker")

export async function access(context: ToolContext, write = false): Promise<FileAccess> {
  if (!isOrchestratorAgent(context.agent))
    throw new FileError(`On this server the file tools serve the orchestrator's agents only, not "${context.agent}".`)
  if (write && context.agent !== WRITER) throw new FileError(`${context.agent} cannot change files.`)
  // A replacement must apply the session's permission rules itself, as the built-in did; a change asks
  // per path once its paths are known (mayChange).
  if (!write) await context.ask?.({ permission: "read", patterns: ["*"], always: ["*"], metadata: {} })
  const { host, policy } = await readInvocation()
  return { workspace: context.directory, host, policy, signal: context.abort, writable: write }
}

/**
 * The session's edit rules on every path a change writes, before any byte is: a scoped worker's session
 * denies edits outside its scope (src/opencode/session.ts createSession), the agent's rules deny Git metadata.
 */
export async function mayChange(context: ToolContext, files: FileAccess, paths: readonly string[]): Promise<void> {
  const patterns = paths.map((path) => workspaceRelative(files.workspace, path))
  if (!context.ask) return
  const asked = await context.ask({ permission: "edit", patterns, always: patterns, metadata: {} }).then(
    () => undefined,
    (error: unknown) => error,
  )
  if (asked === undefined) return
  if (context.abort.aborted) throw asked
  throw new FileError(
    `Changing ${patterns.join(", ")} is refused by this session's rules: outside the paths the parent allowed ` +
      "this worker (its scope), or Git metadata. Leave it unchanged and say in your report what it would need.",
  )
}

export const output = (title: string, text: string, metadata: Record<string, unknown> = {}): ToolOutput => ({
  title,
  output: text,
  metadata: { sandboxed: true, ...metadata },
})

/** Errors a model can act on become the tool's answer; anything else propagates as OpenCode reports it. */
export async function answer(body: () => Promise<ToolOutput>): Promise<ToolOutput> {
  try {
    return await body()
  } catch (error) {
    if (error instanceof FileError || error instanceof EditError) throw new Error(error.message)
    throw error
  }
}

/** A file's text for a change (undefined when it does not exist), refused for a directory or a huge file. */
export async function readText(files: FileAccess, path: string, purpose: string): Promise<string | undefined> {
  const found = await readPath(files, path)
  if (found.kind === "missing") return undefined
  if (found.kind === "dir") throw new FileError(`${path} is a directory; ${purpose} needs a file.`)
  if (found.truncated)
    throw new FileError(`${path} is larger than the file tools handle; change it with sandbox_shell instead.`)
  return found.text
}
