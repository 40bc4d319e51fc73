// write, edit and apply_patch: the replaced built-ins that change files, for the worker only, each
// byte written through bwrap (io.ts) with the built-in's argument names and output format. Every
// argument a change needs is required: a call without `content` is refused, never an empty file.
import { arg, defineTool, type PluginTool } from "../tool"
import type { SessionClient } from "../types"
import applyPatchText from "../text/apply_patch.md" with { type: "text" }
import editText from "../text/edit.md" with { type: "text" }
import writeText from "../text/write.md" with { type: "text" }
import { answer, mayChange, output, readText, writeAccess } from "./access"
import { FileError, readPath, refuseAutorun, removePath, writePath, type FileAccess } from "./io"
import { absolutePath, applyHunks, parsePatch, replaceText, workspaceRelative, type PatchOp } from "./text"

export const writeTool = (client?: SessionClient): PluginTool =>
  defineTool({
    name: "write",
    description: writeText,
    args: {
      content: arg.text("The content to write to the file.", { empty: true }),
      filePath: arg.text("The absolute path to the file to write (must be absolute, not relative)."),
    },
    execute: ({ content, filePath }, context) =>
      answer(async () => {
        const files = await writeAccess(context, client)
        const path = absolutePath(files, filePath)
        await mayChange(context, files, [path])
        await writePath(files, path, content)
        return output(workspaceRelative(files.workspace, path), "Wrote file successfully.")
      }),
  })

export const editTool = (client?: SessionClient): PluginTool =>
  defineTool({
    name: "edit",
    description: editText,
    args: {
      filePath: arg.text("The absolute path to the file to modify."),
      // Empty is meaningful for both: an empty oldString creates a missing file, an empty newString deletes.
      oldString: arg.text("The text to replace.", { empty: true }),
      newString: arg.text("The text to replace it with (must be different from oldString).", { empty: true }),
      replaceAll: arg.flag("Replace all occurrences of oldString (default false)."),
    },
    execute: ({ filePath, oldString, newString, replaceAll }, context) =>
      answer(async () => {
        const files = await writeAccess(context, client)
        const path = absolutePath(files, filePath)
        await mayChange(context, files, [path])
        const found = await readPath(files, path)
        if (found.kind === "dir") throw new FileError(`Path is a directory, not a file: ${path}`)
        if (found.kind === "file" && found.truncated)
          throw new FileError(`${path} is larger than the file tools handle; change it with sandbox_shell instead.`)
        if (found.kind === "missing") {
          if (oldString !== "") throw new FileError(`File ${path} not found`)
          await writePath(files, path, newString)
        } else await writePath(files, path, replaceText(found.text, oldString, newString, replaceAll))
        return output(workspaceRelative(files.workspace, path), "Edit applied successfully.")
      }),
  })

interface PlannedWrite {
  path: string
  /** Absent: the file is removed. */
  content?: string
}

/** Every write a patch makes, computed before anything is written: a hunk that does not apply changes nothing. */
async function planPatch(files: FileAccess, ops: PatchOp[]): Promise<{ writes: PlannedWrite[]; summary: string[] }> {
  const writes: PlannedWrite[] = []
  const summary: string[] = []
  for (const op of ops) {
    const path = absolutePath(files, op.path)
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
        const target = absolutePath(files, op.moveTo)
        writes.push({ path: target, content: updated }, { path })
        summary.push(`M ${workspaceRelative(files.workspace, target)}`)
      } else {
        writes.push({ path, content: updated })
        summary.push(`M ${shown}`)
      }
    }
  }
  return { writes, summary }
}

/** Tolerates OpenCode's own prefixes on a patch's paths: workspace-relative or absolute. */
export const applyPatchTool = (client?: SessionClient): PluginTool =>
  defineTool({
    name: "apply_patch",
    description: applyPatchText,
    args: { patchText: arg.text("The full patch text that describes all changes to be made.") },
    execute: ({ patchText }, context) =>
      answer(async () => {
        const files = await writeAccess(context, client)
        const ops = parsePatch(patchText)
        const { writes, summary } = await planPatch(files, ops)
        await mayChange(
          context,
          files,
          writes.map((write) => write.path),
        )
        // A refused file refuses the whole patch, before anything is written.
        for (const write of writes) await refuseAutorun(files, write.path, write.content, "apply_patch")
        for (const write of writes)
          await (write.content === undefined
            ? removePath(files, write.path)
            : writePath(files, write.path, write.content))
        return output(`${ops.length} file(s)`, `Success. Updated the following files:\n${summary.join("\n")}`)
      }),
  })
