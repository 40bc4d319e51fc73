// What the stored records' zod schemas share: a part whose type a lower module declares.
import { z } from "zod"

/**
 * A part typed as the module that declares it has it (a session's route, a tool call, a worktree's
 * layout): `shape` checks what this record's readers rely on, and the rest of the part is kept as written.
 */
export const owned = <T>(shape: z.ZodType) => shape.pipe(z.custom<T>())
