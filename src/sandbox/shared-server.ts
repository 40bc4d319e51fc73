// Names the MCP side and the plugin must agree on, kept where both can import them (this folder has no
// zod and nothing that runs at import time): the variable only our shared `opencode serve` is started
// with, and the marker tool the plugin registers beside its sandboxed file tools.

/** Set to "1" only in our shared server's environment; the plugin replaces OpenCode's file tools there alone. */
export const SHARED_SERVER_VARIABLE = "OPENCODE_MCP_ORCHESTRATOR_SERVER"

/** Registered only beside the sandboxed file tools and denied to every agent; delegation looks for it first. */
export const FILES_MARKER = "sandbox_files_ready"
