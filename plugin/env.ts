// The plugin's one edge to its surroundings: OpenCode's process environment and this program's
// config.json, read afresh on every tool invocation (so an edited limit or trusted root applies
// without restarting the shared OpenCode server), and handed to everything else as data. The
// environment goes through the same reader as the MCP side (src/config/flags.ts): one parser, one
// rule for empty values, one HOME fallback. With test/config/env-reads.test.ts, the only other file
// allowed to touch process.env.
import { readFlags, type Env } from "../src/config/flags"
import type { SandboxLimits } from "../src/config/limits"
import { loadConfig, parseConfig } from "../src/config/load"
import { resolvePaths, type Paths } from "../src/config/paths"
import type { Config } from "../src/config/schema"
import { AppError, fail } from "../src/errors"
import {
  admitWorkspace,
  hostContext,
  hostFs,
  SHARED_SERVER_VARIABLE,
  type AdmissionPolicy,
  type HostContext,
  type TrustedRootInput,
  workspaceOf,
} from "../src/sandbox"
import configRefused from "./text/config_refused.md" with { type: "text" }

export interface Invocation {
  limits: SandboxLimits
  host: HostContext
  policy: AdmissionPolicy
  paths: Paths
}

/** True inside the shared server: only there do the sandboxed file tools replace OpenCode's built-ins. */
export const isSharedServer = (env: Env = process.env) => env[SHARED_SERVER_VARIABLE] === "1"

export interface ConfigSlice {
  trustedRoots: TrustedRootInput[]
  policy: AdmissionPolicy
}

const sliceOf = (config: Config): ConfigSlice => ({
  trustedRoots: config.sandboxRuntime.trustedRoots,
  policy: { workspaceRoots: config.workspaceRoots, trustedProjectConfig: config.trustedProjectConfig },
})

/**
 * The slice of config.json the plugin uses, read through the same zod schema as the MCP side
 * (src/config/schema.ts, parseConfig): a value or an unknown key the schema refuses fails every
 * sandbox tool closed with the same message, rather than running with fewer (or more) mounts or
 * roots than the user meant.
 */
export const configSliceOf = (raw: unknown, file: string): ConfigSlice => sliceOf(parseConfig(raw, file))

/** The slice from the file, by the MCP side's reader: a missing file means the defaults. */
const readConfigSlice = async (file: string): Promise<ConfigSlice> => sliceOf(await loadConfig(file))

/**
 * The workspace a session's directory stands for: OpenCode is given a stand-in of ours, never the
 * workspace (src/sandbox/stand-ins.ts); a session someone started elsewhere directly is its own directory.
 */
export const sessionWorkspace = (directory: string, paths: Pick<Paths, "opencodeDirsDir">) =>
  workspaceOf(paths.opencodeDirsDir, directory, hostFs)

/** The session's workspace, admitted by the same rule the MCP tools applied before starting it. */
export const admitted = (directory: string, invocation: Invocation) =>
  admitWorkspace(sessionWorkspace(directory, invocation.paths), invocation.host, invocation.policy, hostFs)

/** Everything one sandbox invocation needs from the environment, read once for that invocation. */
export async function readInvocation(env: Env = { ...process.env }): Promise<Invocation> {
  const flags = readFlags(env)
  const paths = resolvePaths(flags)
  const { trustedRoots, policy } = await readConfigSlice(paths.configFile).catch((error: unknown) => {
    throw configRefusal(error)
  })
  return { limits: flags.sandbox.limits, host: hostContext(flags, trustedRoots), policy, paths }
}

/** A config error as the agent reads it: the schema's message, the fix, and that it is the user's to make. */
export function configRefusal(error: unknown): unknown {
  if (!(error instanceof AppError) || error.kind !== "Config") return error
  const text = configRefused.replace("{{error}}", error.message).replace("{{fix}}", error.hint ?? "")
  return fail("Config", text.trim(), error.hint, error.data)
}
