// How to start this program again (the MCP server for demo and doctor --live, the patch_apply write
// step in its sandbox): the compiled binary itself, or bun with an entry file when running from source.
import { realpathSync } from "node:fs"

const compiled = () => import.meta.path.startsWith("/$bunfs/")

export function selfCommand(): string[] {
  return compiled() ? [process.execPath] : [process.execPath, `${import.meta.dir}/../cli/main.ts`]
}

/**
 * Argument of the compiled binary that runs the patch_apply write step (main.ts), never a subcommand a person types.
 */
export const APPLY_STEP_ARG = "__apply-step"

/**
 * The write step's command, and what a sandbox must mount read-only for it to start: the binary, or
 * bun and the source tree (the step's imports stay inside src/).
 */
export function selfStep(): { command: string[]; programs: string[] } {
  const exec = realpathSync(process.execPath)
  if (compiled()) return { command: [exec, APPLY_STEP_ARG], programs: [exec] }
  const src = realpathSync(`${import.meta.dir}/..`)
  return { command: [exec, `${src}/cli/apply-step.ts`], programs: [exec, src] }
}
