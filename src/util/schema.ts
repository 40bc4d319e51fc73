// What the stored records' zod schemas share: a date as records write it, a count, and a part whose type a
// lower module declares.
import { z } from "zod"
import { isDate } from "./state-file"

/** An ISO date as a record writes it: any text Date.parse reads. */
export const date = z.string().refine(isDate, "not a date")

/** A size, a number of steps or an amount of money: never negative. */
export const count = z.number().nonnegative()

/**
 * A part typed as the module that declares it has it (a session's route, a tool call, a worktree's
 * layout): `shape` checks what this record's readers rely on, and the rest of the part is kept as written.
 */
export const owned = <T>(shape: z.ZodType) => shape.pipe(z.custom<T>())
