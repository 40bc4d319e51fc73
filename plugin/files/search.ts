// read, grep and glob: the replaced built-ins that only look, each through bwrap (io.ts) with the
// built-in's argument names and output format.
import { arg, defineTool, type PluginTool } from "../tool"
import type { ToolContext } from "../types"
import globText from "../text/glob.md" with { type: "text" }
import grepText from "../text/grep.md" with { type: "text" }
import readDescription from "../text/read.md" with { type: "text" }
import { access, answer, output } from "./access"
import { FileError, readPath, ripgrep } from "./io"
import {
  absolutePath,
  DEFAULT_READ_LIMIT,
  formatDirectory,
  formatRead,
  looksBinary,
  SEARCH_LIMIT,
  workspaceRelative,
} from "./text"

const SEARCH_PATH = "The directory to search in. Defaults to the workspace."

/** ripgrep over `where` (the workspace by default) with no user config, hidden files included, errors quiet. */
async function search(context: ToolContext, where: string | undefined, flags: string[]) {
  const files = await access(context)
  const path = absolutePath(files, where ?? ".")
  return ripgrep(files, ["--no-config", "--hidden", "--no-messages", ...flags, "--", path])
}

export const readTool = (): PluginTool =>
  defineTool({
    name: "read",
    description: readDescription.replace("{{limit}}", String(DEFAULT_READ_LIMIT)),
    args: {
      filePath: arg.text("The path of the file to read."),
      offset: arg.integer("The line number to start reading from (1-indexed).", {
        minimum: 1,
        fallback: 1,
        zeroIsUnset: true,
      }),
      limit: arg.integer(`The maximum number of lines to read (defaults to ${DEFAULT_READ_LIMIT}).`, {
        minimum: 1,
        fallback: DEFAULT_READ_LIMIT,
        zeroIsUnset: true,
      }),
    },
    execute: ({ filePath, offset, limit }, context) =>
      answer(async () => {
        const files = await access(context)
        const path = absolutePath(files, filePath)
        const found = await readPath(files, path)
        if (found.kind === "missing") throw new FileError(`File not found: ${path}`)
        if (found.kind === "dir")
          return output(
            workspaceRelative(files.workspace, path) || ".",
            formatDirectory(path, found.entries, offset, limit),
          )
        if (looksBinary(found.text)) throw new FileError(`Cannot read binary file: ${path}`)
        return output(workspaceRelative(files.workspace, path), formatRead(path, found.text, offset, limit))
      }),
  })

/** ripgrep's `-nH --null` lines as [file, line, text]: NUL ends each path, so no path is ambiguous. */
const grepMatches = (raw: string) =>
  raw.split("\n").flatMap((entry) => {
    const match = /^([^\0]*)\0(\d+):(.*)$/s.exec(entry)
    return match ? [[match[1]!, match[2]!, match[3]!] as const] : []
  })

export const grepTool = (): PluginTool =>
  defineTool({
    name: "grep",
    description: grepText,
    args: {
      pattern: arg.text("The regex pattern to search for in file contents."),
      path: arg.optionalText(SEARCH_PATH),
      include: arg.optionalText('File pattern to include in the search (e.g. "*.js", "*.{ts,tsx}").'),
    },
    execute: ({ pattern, path: where, include }, context) =>
      answer(async () => {
        const raw = await search(context, where, [
          "--color=never",
          "-nH",
          "--no-heading",
          "--null",
          "--sortr=modified",
          "--max-columns=2000",
          ...(include ? ["--glob", include] : []),
          "-e",
          pattern,
        ])
        const matches = grepMatches(raw)
        if (!matches.length) return output(pattern, "No files found", { matches: 0 })
        const more = matches.length > SEARCH_LIMIT
        const lines = [`Found ${matches.length} matches${more ? ` (showing first ${SEARCH_LIMIT})` : ""}`]
        let current = ""
        for (const [file, line, text] of matches.slice(0, SEARCH_LIMIT)) {
          if (file !== current) {
            if (current) lines.push("")
            lines.push(`${file}:`)
            current = file
          }
          lines.push(`  Line ${line}: ${text}`)
        }
        if (more)
          lines.push(
            "",
            `(Results truncated: showing ${SEARCH_LIMIT} of ${matches.length} matches. ` +
              "Consider using a more specific path or pattern.)",
          )
        return output(pattern, lines.join("\n"), { matches: matches.length })
      }),
  })

export const globTool = (): PluginTool =>
  defineTool({
    name: "glob",
    description: globText,
    args: {
      pattern: arg.text("The glob pattern to match files against."),
      path: arg.optionalText(SEARCH_PATH),
    },
    execute: ({ pattern, path: where }, context) =>
      answer(async () => {
        const listed = await search(context, where, ["--no-ignore", "--files", "--glob", pattern, "--glob", "!.git/"])
        const found = listed.split("\n").filter(Boolean)
        if (!found.length) return output(pattern, "No files found", { count: 0 })
        const note =
          found.length > SEARCH_LIMIT
            ? ["", "(Results are truncated. Consider using a more specific path or pattern.)"]
            : []
        return output(pattern, [...found.slice(0, SEARCH_LIMIT), ...note].join("\n"), { count: found.length })
      }),
  })
