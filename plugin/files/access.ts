// What every replaced file tool does before and after its work: who may call it (the orchestrator's
// agents; only the worker writes), the session's permission rules, the sandbox access for this
// call (a scoped worker's writes get the mounts its shell gets: only the scope writable), and how its
// answer and its refusals reach the model.
import { agentName } from "../../src/agents/names"
import { readInvocation, sessionWorkspace } from "../env"
import { isOrchestratorAgent } from "../roles"
import { sessionScope } from "../scope"
import type { SessionClient, ToolContext, ToolOutput } from "../types"
import { FileError, readPath, type FileAccess } from "./io"
import { EditError, workspaceRelative } from "./text"

/** The one agent that may change files through these tools. */
const WRITER = agentName("worker")

/** A looking tool's access: the read-only sandbox. */
export async function access(context: ToolContext): Promise<FileAccess> {
  callerCheck(context)
  // A replacement must apply the session's permission rules itself, as the built-in did.
  await context.ask?.({ permission: "read", patterns: ["*"], always: ["*"], metadata: {} })
  return { ...(await located(context)), signal: context.abort, writable: false }
}

/**
 * A changing tool's access, the worker's only: its session's scope read as sandbox_shell reads it
 * (plugin/scope.ts), so the kernel holds the same scope for both; one that cannot be read leaves the
 * whole workspace read-only. The edit rules are asked per path once the paths are known (mayChange).
 */
export async function writeAccess(context: ToolContext, client: SessionClient | undefined): Promise<FileAccess> {
  callerCheck(context)
  if (context.agent !== WRITER) throw new FileError(`${context.agent} cannot change files.`)
  // The session is OpenCode's, named by the directory OpenCode knows (the stand-in), as sandbox_shell asks.
  const scope = await sessionScope(client, context.sessionID, context.directory)
  const base = { ...(await located(context)), signal: context.abort, writable: true }
  if (scope.kind === "open") return base
  return { ...base, scope: scope.kind === "scoped" ? scope.scope : [] }
}

/** The workspace a call acts in, and the stand-in OpenCode knows it by (paths under that mean the workspace). */
async function located(context: ToolContext) {
  const { host, policy, paths } = await readInvocation()
  const workspace = sessionWorkspace(context.directory, paths)
  const standIn = workspace === context.directory ? undefined : context.directory
  return { workspace, standIn, host, policy }
}

function callerCheck(context: ToolContext): void {
  if (!isOrchestratorAgent(context.agent))
    throw new FileError(`On this server the file tools serve the orchestrator's agents only, not "${context.agent}".`)
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
