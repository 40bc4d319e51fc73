// The plugin's one edge to its surroundings: OpenCode's process environment and this program's
// config.json, read afresh on every tool invocation (so an edited limit or trusted root applies
// without restarting the shared OpenCode server), and handed to everything else as data. The
// environment goes through the same reader as the MCP side (src/config/flags.ts): one parser, one
// rule for empty values, one HOME fallback. With test/config/env-reads.test.ts, the only other file
// allowed to touch process.env.
import { readFlags, type Env } from "../src/config/flags"
import type { SandboxLimits } from "../src/config/limits"
import { resolvePaths, type Paths } from "../src/config/paths"
import { fail } from "../src/errors"
import {
  admitWorkspace,
  hostContext,
  hostFs,
  SHARED_SERVER_VARIABLE,
  type AdmissionPolicy,
  type HostContext,
  type TrustedRootInput,
} from "../src/sandbox"

export interface Invocation {
  limits: SandboxLimits
  host: HostContext
  policy: AdmissionPolicy
  paths: Paths
}

/** True inside the shared server: only there do the sandboxed file tools replace OpenCode's built-ins. */
export const isSharedServer = (env: Env = process.env) => env[SHARED_SERVER_VARIABLE] === "1"

const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((item) => typeof item === "string")
const isStringRecord = (value: unknown): value is Record<string, string> =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.values(value).every((item) => typeof item === "string")

/**
 * `sandboxRuntime.trustedRoots` from config.json. The full zod schema stays out of the bundle; this
 * checks the shape and src/sandbox checks every path. A malformed file fails closed rather than
 * running with fewer (or more) mounts than the user wrote.
 */
export function trustedRootsOf(raw: unknown, file: string): TrustedRootInput[] {
  const bad = (why: string) =>
    fail(
      "Config",
      `${file}: sandboxRuntime.trustedRoots ${why}.`,
      `Fix ${file} (see README, "Sandbox and runner"), or run \`opencode-mcp-orchestrator doctor\`.`,
    )
  if (typeof raw !== "object" || raw === null)
    throw fail(
      "Config",
      `${file} is not a JSON object.`,
      `Fix ${file}, or rerun \`opencode-mcp-orchestrator install\`.`,
    )
  const runtime = (raw as { sandboxRuntime?: unknown }).sandboxRuntime
  if (runtime === undefined) return []
  if (typeof runtime !== "object" || runtime === null) throw bad("is not inside an object")
  const roots = (runtime as { trustedRoots?: unknown }).trustedRoots
  if (roots === undefined) return []
  if (!Array.isArray(roots)) throw bad("is not a list")
  return roots.map((entry: unknown, index) => {
    const item = entry as Partial<Record<"root" | "pathEntries" | "environment", unknown>> | null
    if (typeof item !== "object" || item === null || typeof item.root !== "string")
      throw bad(`[${index}] has no "root" path`)
    if (item.pathEntries !== undefined && !isStringArray(item.pathEntries))
      throw bad(`[${index}].pathEntries is not a list of strings`)
    if (item.environment !== undefined && !isStringRecord(item.environment))
      throw bad(`[${index}].environment is not an object of strings`)
    return { root: item.root, pathEntries: item.pathEntries, environment: item.environment }
  })
}

/** `workspaceRoots` and `trustedProjectConfig` from config.json: lists of absolute paths, or a Config error. */
export function admissionPolicyOf(raw: unknown, file: string): AdmissionPolicy {
  const config = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>
  const list = (key: "workspaceRoots" | "trustedProjectConfig"): string[] => {
    const value = config[key]
    if (value === undefined) return []
    if (!isStringArray(value) || value.some((path) => !path.startsWith("/")))
      throw fail(
        "Config",
        `${file}: ${key} is not a list of absolute paths.`,
        `Fix ${file} (see README, "Sandbox and runner").`,
      )
    return value
  }
  return { workspaceRoots: list("workspaceRoots"), trustedProjectConfig: list("trustedProjectConfig") }
}

/** The session's directory, admitted by the same rule the MCP tools applied before starting it. */
export const admitted = (directory: string, invocation: Invocation) =>
  admitWorkspace(directory, invocation.host, invocation.policy, hostFs)

async function readConfig(file: string): Promise<unknown> {
  const handle = Bun.file(file)
  if (!(await handle.exists())) return {}
  try {
    return JSON.parse(await handle.text())
  } catch (error) {
    throw fail("Config", `${file} is not valid JSON: ${(error as Error).message}`, `Fix the JSON syntax in ${file}.`)
  }
}

/** Everything one sandbox invocation needs from the environment, read once for that invocation. */
export async function readInvocation(env: Env = { ...process.env }): Promise<Invocation> {
  const flags = readFlags(env)
  const paths = resolvePaths(flags)
  const config = await readConfig(paths.configFile)
  const roots = trustedRootsOf(config, paths.configFile)
  return {
    limits: flags.sandbox.limits,
    host: hostContext(flags, roots),
    policy: admissionPolicyOf(config, paths.configFile),
    paths,
  }
}
