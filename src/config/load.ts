// Reads config.json. A missing file means defaults; an invalid one is an error that names the file,
// the field and the fix. Nothing here ever writes the file.
import type { z } from "zod"
import { fail } from "../errors"
import { readJsonFile } from "../util/fs"
import { ConfigSchema, defaultConfig, type Config } from "./schema"

export async function loadConfig(file: string): Promise<Config> {
  const raw = await readJsonFile(file, "Config", `Fix it by hand, or move it aside and run \`opencode-mcp-orchestrator install\` to write a new one.`)
  return raw === undefined ? defaultConfig() : parseConfig(raw, file)
}

export function parseConfig(raw: unknown, file: string): Config {
  const parsed = ConfigSchema.safeParse(raw)
  if (parsed.success) return parsed.data
  const issues = parsed.error.issues.map(describeIssue)
  throw fail(
    "Config",
    `${file} is invalid:\n${issues.map((line) => `  - ${line}`).join("\n")}`,
    `Edit ${file} to fix the field${issues.length > 1 ? "s" : ""} above (the file was not changed), or move it aside and run \`opencode-mcp-orchestrator install\` to write a new one.`,
    { file, issues },
  )
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length ? issue.path.join(".") : "(top level)"
  if (issue.code === "unrecognized_keys")
    return `${field}: unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((k) => `"${k}"`).join(", ")}; remove ${issue.keys.length > 1 ? "them" : "it"}`
  return `${field}: ${issue.message}`
}
