// read, write, edit, grep, glob and apply_patch, replacing OpenCode's built-ins on the shared
// server only (a plugin tool with a built-in's name replaces it for every agent on that server). Same
// argument names and output format as the built-ins, so models behave the same; every byte read or
// written passes through bwrap (io.ts). Guards (../guards.ts) still refuse by path first, with
// clearer messages; the sandbox is what holds when a path changes between the check and the use.
import { agentName } from "../../src/agents/names"
import { FILES_MARKER } from "../../src/sandbox"
import { isOrchestratorAgent } from "../roles"
import type { ToolContext, ToolDefinition, ToolOutput } from "../types"
import { readInvocation } from "../env"
import { FileError, readPath, refuseAutorun, removePath, ripgrep, writePath, type FileAccess } from "./io"
import {
  absolutePath,
  applyHunks,
  DEFAULT_READ_LIMIT,
  EditError,
  formatDirectory,
  formatRead,
  looksBinary,
  parsePatch,
  replaceText,
  SEARCH_LIMIT,
  workspaceRelative,
} from "./text"

/** The one agent that may change files through these tools. */
const WRITER = agentName("worker")

async function access(context: ToolContext, write = false): Promise<FileAccess> {
  if (!isOrchestratorAgent(context.agent))
    throw new FileError(`On this server the file tools serve the orchestrator's agents only, not "${context.agent}".`)
  if (write && context.agent !== WRITER) throw new FileError(`${context.agent} cannot change files.`)
  // A replacement must apply the session's permission rules itself, as the built-in did.
  await context.ask?.({ permission: write ? "edit" : "read", patterns: ["*"], always: ["*"], metadata: {} })
  const { host, policy } = await readInvocation()
  return { workspace: context.directory, host, policy, signal: context.abort, writable: write }
}

const stringOf = (args: Record<string, unknown>, name: string, optional = false): string | undefined => {
  const value = args[name]
  if (value === undefined || value === null || value === "") {
    if (optional) return undefined
    throw new FileError(`The "${name}" argument is required.`)
  }
  if (typeof value !== "string") throw new FileError(`The "${name}" argument must be a string.`)
  return value
}

const numberOf = (args: Record<string, unknown>, name: string): number | undefined => {
  const value = args[name]
  if (value === undefined || value === null || value === "") return undefined
  const number = typeof value === "string" ? Number(value) : value
  if (typeof number !== "number" || !Number.isFinite(number) || number < 0)
    throw new FileError(`The "${name}" argument must be a non-negative number.`)
  return Math.floor(number)
}

const output = (title: string, text: string, metadata: Record<string, unknown> = {}): ToolOutput => ({
  title,
  output: text,
  metadata: { sandboxed: true, ...metadata },
})

/** Errors a model can act on become the tool's answer; anything else propagates as OpenCode reports it. */
async function answer(body: () => Promise<ToolOutput>): Promise<ToolOutput> {
  try {
    return await body()
  } catch (error) {
    if (error instanceof FileError || error instanceof EditError) throw new Error(error.message)
    throw error
  }
}

async function readText(files: FileAccess, path: string, purpose: string): Promise<string | undefined> {
  const found = await readPath(files, path)
  if (found.kind === "missing") return undefined
  if (found.kind === "dir") throw new FileError(`${path} is a directory; ${purpose} needs a file.`)
  if (found.truncated)
    throw new FileError(`${path} is larger than the file tools handle; change it with sandbox_shell instead.`)
  return found.text
}

export function readTool(): ToolDefinition {
  return {
    description:
      "Read a file (or list a directory) in the workspace. filePath is absolute or relative to the workspace; offset is the 1-based line to start from; limit the number of lines (default 2000).",
    args: {
      filePath: { type: "string", description: "The path of the file to read." },
      offset: { type: "integer", minimum: 1, description: "The line number to start reading from (1-indexed)." },
      limit: {
        type: "integer",
        minimum: 1,
        description: `The maximum number of lines to read (defaults to ${DEFAULT_READ_LIMIT}).`,
      },
    },
    execute: (args, context) =>
      answer(async () => {
        const files = await access(context)
        const path = absolutePath(files.workspace, stringOf(args, "filePath")!)
        const found = await readPath(files, path)
        if (found.kind === "missing") throw new FileError(`File not found: ${path}`)
        if (found.kind === "dir")
          return output(
            workspaceRelative(files.workspace, path) || ".",
            formatDirectory(
              path,
              found.entries,
              numberOf(args, "offset") || 1,
              numberOf(args, "limit") || DEFAULT_READ_LIMIT,
            ),
          )
        if (looksBinary(found.text)) throw new FileError(`Cannot read binary file: ${path}`)
        return output(
          workspaceRelative(files.workspace, path),
          formatRead(path, found.text, numberOf(args, "offset") || 1, numberOf(args, "limit") || DEFAULT_READ_LIMIT),
        )
      }),
  }
}

export function writeTool(): ToolDefinition {
  return {
    description:
      "Write a file in the workspace, replacing it if it exists (creating parent directories). Read an existing file first.",
    args: {
      content: { type: "string", description: "The content to write to the file." },
      filePath: {
        type: "string",
        description: "The absolute path to the file to write (must be absolute, not relative).",
      },
    },
    execute: (args, context) =>
      answer(async () => {
        const files = await access(context, true)
        const path = absolutePath(files.workspace, stringOf(args, "filePath")!)
        const content = typeof args.content === "string" ? args.content : ""
        await writePath(files, path, content)
        return output(workspaceRelative(files.workspace, path), "Wrote file successfully.")
      }),
  }
}

export function editTool(): ToolDefinition {
  return {
    description:
      "Replace oldString with newString in a file of the workspace. oldString must match the file exactly once (or set replaceAll).",
    args: {
      filePath: { type: "string", description: "The absolute path to the file to modify." },
      oldString: { type: "string", description: "The text to replace." },
      newString: { type: "string", description: "The text to replace it with (must be different from oldString)." },
      replaceAll: { type: "boolean", description: "Replace all occurrences of oldString (default false)." },
    },
    execute: (args, context) =>
      answer(async () => {
        const files = await access(context, true)
        const path = absolutePath(files.workspace, stringOf(args, "filePath")!)
        const oldString = typeof args.oldString === "string" ? args.oldString : ""
        const newString = typeof args.newString === "string" ? args.newString : ""
        const found = await readPath(files, path)
        if (found.kind === "dir") throw new FileError(`Path is a directory, not a file: ${path}`)
        if (found.kind === "file" && found.truncated)
          throw new FileError(`${path} is larger than the file tools handle; change it with sandbox_shell instead.`)
        const current = found.kind === "file" ? found.text : undefined
        if (current === undefined) {
          if (oldString !== "") throw new FileError(`File ${path} not found`)
          await writePath(files, path, newString)
        } else
          await writePath(
            files,
            path,
            replaceText(current, oldString, newString, args.replaceAll === true || args.replaceAll === "true"),
          )
        return output(workspaceRelative(files.workspace, path), "Edit applied successfully.")
      }),
  }
}

/** Tolerates OpenCode's own prefixes on a patch's paths: workspace-relative or absolute. */
export function applyPatchTool(): ToolDefinition {
  return {
    description:
      "Apply a patch in the apply_patch format (*** Begin Patch / *** Add File: / *** Update File: / *** Delete File: / *** Move to: / @@ hunks / *** End Patch) to files of the workspace.",
    args: { patchText: { type: "string", description: "The full patch text that describes all changes to be made." } },
    execute: (args, context) =>
      answer(async () => {
        const files = await access(context, true)
        const ops = parsePatch(stringOf(args, "patchText")!)
        // Everything is computed before anything is written: a hunk that does not apply changes nothing.
        const writes: { path: string; content?: string }[] = []
        const summary: string[] = []
        for (const op of ops) {
          const path = absolutePath(files.workspace, op.path)
          const shown = workspaceRelative(files.workspace, path)
          if (op.kind === "add") {
            writes.push({ path, content: op.content })
            summary.push(`A ${shown}`)
          } else if (op.kind === "delete") {
            if ((await readText(files, path, "delete")) === undefined) throw new FileError(`File not found: ${path}`)
            writes.push({ path })
            summary.push(`D ${shown}`)
          } else {
            const current = await readText(files, path, "update")
            if (current === undefined) throw new FileError(`File not found: ${path}`)
            const updated = applyHunks(shown, current, op.hunks)
            if (op.moveTo) {
              const target = absolutePath(files.workspace, op.moveTo)
              writes.push({ path: target, content: updated }, { path })
              summary.push(`M ${workspaceRelative(files.workspace, target)}`)
            } else {
              writes.push({ path, content: updated })
              summary.push(`M ${shown}`)
            }
          }
        }
        // A refused file refuses the whole patch, before anything is written.
        for (const write of writes) await refuseAutorun(files, write.path, write.content, "apply_patch")
        for (const write of writes)
          await (write.content === undefined
            ? removePath(files, write.path)
            : writePath(files, write.path, write.content))
        return output(`${ops.length} file(s)`, `Success. Updated the following files:\n${summary.join("\n")}`)
      }),
  }
}

export function grepTool(): ToolDefinition {
  return {
    description:
      "Search file contents in the workspace with a regular expression (ripgrep syntax). Returns matching lines grouped by file, newest files first.",
    args: {
      pattern: { type: "string", description: "The regex pattern to search for in file contents." },
      path: { type: "string", description: "The directory to search in. Defaults to the workspace." },
      include: { type: "string", description: 'File pattern to include in the search (e.g. "*.js", "*.{ts,tsx}").' },
    },
    execute: (args, context) =>
      answer(async () => {
        const files = await access(context)
        const pattern = stringOf(args, "pattern")!
        const path = absolutePath(files.workspace, stringOf(args, "path", true) ?? ".")
        const include = stringOf(args, "include", true)
        const raw = await ripgrep(files, [
          "--no-config",
          "--hidden",
          "--no-messages",
          "--color=never",
          "-nH",
          "--no-heading",
          "--null",
          "--sortr=modified",
          "--max-columns=2000",
          ...(include ? ["--glob", include] : []),
          "-e",
          pattern,
          "--",
          path,
        ])
        // --null ends each path with NUL (no path is ambiguous); the line number ends at the first colon after it.
        const matches = raw.split("\n").flatMap((entry) => {
          const match = /^([^\0]*)\0(\d+):(.*)$/s.exec(entry)
          return match ? [[match[1]!, match[2]!, match[3]!]] : []
        })
        if (!matches.length) return output(pattern, "No files found", { matches: 0 })
        const shown = matches.slice(0, SEARCH_LIMIT)
        const lines = [
          `Found ${matches.length} matches${matches.length > SEARCH_LIMIT ? ` (showing first ${SEARCH_LIMIT})` : ""}`,
        ]
        let current = ""
        for (const [file, line, text] of shown) {
          if (file !== current) {
            if (current) lines.push("")
            lines.push(`${file}:`)
            current = file!
          }
          lines.push(`  Line ${line}: ${text}`)
        }
        if (matches.length > SEARCH_LIMIT)
          lines.push(
            "",
            `(Results truncated: showing ${SEARCH_LIMIT} of ${matches.length} matches. Consider using a more specific path or pattern.)`,
          )
        return output(pattern, lines.join("\n"), { matches: matches.length })
      }),
  }
}

export function globTool(): ToolDefinition {
  return {
    description: 'Find files in the workspace by glob pattern (e.g. "**/*.ts"); hidden and ignored files included.',
    args: {
      pattern: { type: "string", description: "The glob pattern to match files against." },
      path: { type: "string", description: "The directory to search in. Defaults to the workspace." },
    },
    execute: (args, context) =>
      answer(async () => {
        const files = await access(context)
        const pattern = stringOf(args, "pattern")!
        const path = absolutePath(files.workspace, stringOf(args, "path", true) ?? ".")
        const found = (
          await ripgrep(files, [
            "--no-config",
            "--hidden",
            "--no-ignore",
            "--no-messages",
            "--files",
            "--glob",
            pattern,
            "--glob",
            "!.git/",
            "--",
            path,
          ])
        )
          .split("\n")
          .filter(Boolean)
        if (!found.length) return output(pattern, "No files found", { count: 0 })
        const shown = found.slice(0, SEARCH_LIMIT)
        const note =
          found.length > SEARCH_LIMIT
            ? ["", "(Results are truncated. Consider using a more specific path or pattern.)"]
            : []
        return output(pattern, [...shown, ...note].join("\n"), { count: found.length })
      }),
  }
}

/** Present only with the replacements, denied to every agent: how the MCP side sees they are loaded. */
export function markerTool(): ToolDefinition {
  return {
    description: "Internal: marks that file access on this server is sandboxed. Never call it.",
    args: {},
    execute: async () => output("ready", "ready"),
  }
}

export function fileTools(): Record<string, ToolDefinition> {
  return {
    read: readTool(),
    write: writeTool(),
    edit: editTool(),
    apply_patch: applyPatchTool(),
    grep: grepTool(),
    glob: globTool(),
    [FILES_MARKER]: markerTool(),
  }
}
