// Reads config.json. A missing file means defaults; an invalid one is an error that names the file,
// the field and the fix. Nothing here ever writes the file.
import { z } from "zod"
import { fail } from "../errors"
import { readJsonFile } from "../util/fs"
import { nearest } from "../util/suggest"
import { ConfigSchema, defaultConfig, type Config } from "./schema"

export async function loadConfig(file: string): Promise<Config> {
  const raw = await readJsonFile(
    file,
    "Config",
    `Fix it by hand, or move it aside and run \`opencode-mcp-orchestrator install\` to write a new one.`,
  )
  return raw === undefined ? defaultConfig() : parseConfig(raw, file)
}

export function parseConfig(raw: unknown, file: string): Config {
  const parsed = ConfigSchema.safeParse(raw)
  if (parsed.success) return parsed.data
  const issues = parsed.error.issues.map(describeIssue)
  throw fail(
    "Config",
    `${file} is invalid:\n${issues.map((line) => `  - ${line}`).join("\n")}`,
    `Edit ${file} to fix the field${issues.length > 1 ? "s" : ""} above (the file was not changed), or move it ` +
      `aside and run \`opencode-mcp-orchestrator install\` to write a new one.`,
    { file, issues },
  )
}

/** The keys the schema knows at `path` (every option's, for a union); empty where keys are free. */
function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const inner = (next: unknown, rest = path) => knownKeys(next as z.ZodType, rest)
  if (schema instanceof z.ZodOptional || schema instanceof z.ZodDefault) return inner(schema.unwrap())
  if (schema instanceof z.ZodUnion) return [...new Set(schema.options.flatMap((option) => inner(option)))]
  if (schema instanceof z.ZodArray) return typeof path[0] === "number" ? inner(schema.element, path.slice(1)) : []
  if (!(schema instanceof z.ZodObject)) return []
  if (!path.length) return Object.keys(schema.shape)
  const field = schema.shape[String(path[0])]
  return field ? inner(field, path.slice(1)) : []
}

function describeIssue(issue: z.core.$ZodIssue): string {
  const field = issue.path.length ? issue.path.join(".") : "(top level)"
  if (issue.code !== "unrecognized_keys") return `${field}: ${issue.message}`
  const known = knownKeys(ConfigSchema, issue.path)
  const many = issue.keys.length > 1
  const named = issue.keys.map((key) => `"${key}"`).join(", ")
  const meant = issue.keys.flatMap((key) => nearest(key, known).slice(0, 2)).map((key) => `"${key}"`)
  if (!many && meant.length) return `${field}: unknown field ${named}; did you mean ${meant.join(" or ")}?`
  const guess = meant.length ? ` (did you mean ${meant.join(", ")}?)` : ""
  return `${field}: unknown field${many ? "s" : ""} ${named}${guess}; remove ${many ? "them" : "it"}`
}
