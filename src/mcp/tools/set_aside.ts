// State files a listing found unreadable and moved aside, as task_list and stats report them: each
// once (the file no longer has its name), with where it went, why, and what to do.
import { z } from "zod"
import type { SetAside } from "../../engine"

export const setAsideShape = z
  .array(z.object({ path: z.string(), moved_to: z.string(), reason: z.string(), fix: z.string() }))
  .optional()
  .describe(
    "State files that could not be read and were moved aside (each reported once); " +
      "the rest of the answer is complete without them.",
  )

export const setAsideRows = (files: SetAside[]) =>
  files.map((file) => ({ path: file.path, moved_to: file.movedTo, reason: file.reason, fix: file.fix }))

export const setAsideLines = (files: SetAside[]) =>
  files.map((file) => `moved aside ${file.path} → ${file.movedTo}: ${file.reason}. ${file.fix}`)
