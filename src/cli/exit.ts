// Exit codes, documented in the README: 0 success, 1 a check or task did not succeed,
// 2 and up an error of a named kind (src/errors.ts).
import { AppError, ErrorKinds } from "../errors"

export function exitCodeOf(error: unknown): number {
  if (error instanceof AppError) return ErrorKinds[error.kind]
  // citty reports unknown commands and missing arguments with its own error class (not exported).
  if (error instanceof Error && error.name === "CLIError") return ErrorKinds.Usage
  return 1
}
