// Errors are values with names. Each carries the advice a person (or a parent agent) needs to act,
// and the CLI maps its kind to a documented exit code in one place (src/cli/exit.ts).

export const ErrorKinds = {
  /** Bad arguments or input: fix the call. */
  Usage: 2,
  /** config.json is unreadable or invalid. */
  Config: 3,
  /** A prerequisite (opencode, bwrap, git, a launcher) is missing or unsafe. */
  Prerequisite: 4,
  /** OpenCode could not be started or reached. */
  Server: 5,
  /** A delegation could not start or finished unsuccessfully. */
  Delegation: 6,
  /** A writable workspace is locked by another delegation. */
  Locked: 7,
  /** The sandbox refused a request (a path, a mount, a limit). */
  Sandbox: 8,
  /** Install, uninstall or release work could not complete. */
  Install: 9,
} as const

export type ErrorKind = keyof typeof ErrorKinds

export class AppError extends Error {
  override readonly name = "AppError"
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** What to do about it, in one sentence. */
    readonly hint?: string,
    readonly data?: Record<string, unknown>,
  ) {
    super(message)
  }
}

export const fail = (kind: ErrorKind, message: string, hint?: string, data?: Record<string, unknown>) =>
  new AppError(kind, message, hint, data)

/** One line (plus the hint) for a person; never a stack trace. */
export function describe(error: unknown): string {
  if (error instanceof AppError) return error.hint ? `${error.message}\n  → ${error.hint}` : error.message
  if (error instanceof Error) return error.message
  return String(error)
}
