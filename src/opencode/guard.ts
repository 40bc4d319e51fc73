// Fail closed when the shared server would not sandbox a delegation: an OpenCode outside the range
// this plugin is tested with (OpenCode 2 does not load V1 plugins and moved its API), or a directory
// instance where our plugin's sandboxed file tools are not loaded (the plugin file missing, broken, or
// a server that was not started by us). Checked before the first delegation in each directory.
import type { OpencodeClient } from "@opencode-ai/sdk/v2"
import { fail } from "../errors"
import { FILES_MARKER } from "../sandbox"

/** The OpenCode releases this plugin and its replaced tools were verified on: 1.18 up to (not with) 2. */
export const TESTED_OPENCODE = { min: [1, 18, 0] as const, belowMajor: 2 }

export function testedVersion(version: string): boolean {
  const parts = /^(\d+)\.(\d+)\.(\d+)/.exec(version)?.slice(1).map(Number)
  if (!parts) return false
  if (parts[0]! >= TESTED_OPENCODE.belowMajor) return false
  for (let i = 0; i < 3; i++) if (parts[i] !== TESTED_OPENCODE.min[i]) return parts[i]! > TESTED_OPENCODE.min[i]!
  return true
}

export async function confirmSandboxed(client: OpencodeClient, version: string, directory: string): Promise<void> {
  if (!testedVersion(version))
    throw fail(
      "Prerequisite",
      `OpenCode ${version || "(unknown version)"} is outside the range this program is tested with (>= ` +
        `${TESTED_OPENCODE.min.join(".")}, < ${TESTED_OPENCODE.belowMajor}); its plugin, and with it the sandbox, ` +
        `may not load.`,
      "Install the pinned OpenCode (npm install -g opencode-ai@1.18.33), or point " +
        "OPENCODE_MCP_ORCHESTRATOR_OPENCODE at it; `opencode-mcp-orchestrator doctor` shows what runs.",
    )
  const ids = await client.tool
    .ids({ directory })
    .then((response) => response.data)
    .catch(() => undefined) // unreachable is "not confirmed": the check below refuses
  if (!Array.isArray(ids) || !ids.includes(FILES_MARKER) || !ids.includes("sandbox_shell"))
    throw fail(
      "Prerequisite",
      `The shared OpenCode server has not loaded this program's sandbox plugin for ${directory}, so delegated ` +
        `agents would read and write files on the host; nothing was started.`,
      "Run `opencode-mcp-orchestrator install` to write the plugin again, then `opencode-mcp-orchestrator doctor`.",
      { directory },
    )
}
