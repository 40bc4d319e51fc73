// The slice of OpenCode's plugin interface this plugin uses, declared here so the bundle has no
// runtime import of @opencode-ai/plugin (OpenCode installs that package lazily; see FACTS in README).
export interface ToolContext {
  sessionID: string
  messageID?: string
  agent: string
  directory: string
  worktree: string
  abort: AbortSignal
}

export interface ToolDefinition {
  description: string
  args: Record<string, unknown>
  execute(args: Record<string, unknown>, context: ToolContext): Promise<string>
}

export interface Hooks {
  tool?: Record<string, ToolDefinition>
  "tool.execute.before"?: (input: { tool: string; sessionID: string; callID: string }, output: { args: Record<string, unknown> }) => Promise<void>
  "tool.execute.after"?: (input: { tool: string; sessionID: string; callID: string }, output: { title: string; output: string; metadata: unknown }) => Promise<void>
  event?: (input: { event: { type: string; properties: Record<string, unknown> } }) => Promise<void>
}

export interface PluginInput {
  directory: string
  worktree: string
}

export type Plugin = (input: PluginInput) => Promise<Hooks>
