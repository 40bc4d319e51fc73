// The slice of OpenCode's plugin interface this plugin uses, declared here so the bundle has no
// runtime import of @opencode-ai/plugin (OpenCode installs that package lazily, and only where it can
// reach the npm registry). Checked against opencode 1.18.33: a tool's `args` may be plain JSON Schema
// objects instead of zod schemas; OpenCode then sends them as the tool's parameters with every key
// required and does not validate the call, so plugin/tool.ts checks every call against its declaration.
export interface ToolContext {
  sessionID: string
  messageID?: string
  agent: string
  directory: string
  worktree: string
  abort: AbortSignal
  /** Applies the session's permission rules to this call (raises an ask, or throws when denied). */
  ask?: (input: {
    permission: string
    patterns: string[]
    always: string[]
    metadata: Record<string, unknown>
  }) => Promise<void>
}

/** A JSON Schema for one argument (`{ type: "string", description }`). */
export interface JsonSchema {
  type: "string" | "integer" | "number" | "boolean"
  description: string
  minimum?: number
  maximum?: number
}

export interface ToolOutput {
  title: string
  output: string
  metadata: Record<string, unknown>
}

export interface ToolDefinition {
  description: string
  args: Record<string, JsonSchema>
  execute(args: Record<string, unknown>, context: ToolContext): Promise<string | ToolOutput>
}

/** A model as OpenCode names it in a message. */
export interface ModelRef {
  providerID: string
  modelID: string
}

/** One message of a session as `experimental.chat.messages.transform` gets it (OpenCode's MessageV2.WithParts). */
export interface ChatMessage {
  /** A user message carries the agent and model its request runs with. */
  info: { role: string; agent?: string; model?: ModelRef }
  parts: { type: string }[]
}

export interface Hooks {
  tool?: Record<string, ToolDefinition>
  "tool.execute.before"?: (
    input: { tool: string; sessionID: string; callID: string },
    output: { args: Record<string, unknown> },
  ) => Promise<void>
  /** Fires before every model request; its `agent` is how the plugin learns which agent a session runs. */
  "chat.params"?: (input: { sessionID: string; agent: string }, output: Record<string, unknown>) => Promise<void>
  /**
   * Before each model request of a session, with its messages. OpenCode 1.18.33 passes no input and
   * reads its own array afterwards, so a change must edit the messages in place.
   */
  "experimental.chat.messages.transform"?: (
    input: Record<string, never>,
    output: { messages: ChatMessage[] },
  ) => Promise<void>
  /**
   * Before OpenCode starts a command on the host itself (1.18.33: its bash tool, POST
   * /session/:id/shell, POST /pty and /api/pty); throwing refuses the command before it starts.
   */
  "shell.env"?: (
    input: { cwd: string; sessionID?: string; callID?: string },
    output: { env: Record<string, string> },
  ) => Promise<void>
  event?: (input: { event: { type: string; properties: Record<string, unknown> } }) => Promise<void>
}

/** The slice of the OpenCode client (SDK v1, in-process) a plugin is handed that this plugin uses. */
export interface SessionClient {
  session: {
    get(input: { path: { id: string }; query?: { directory?: string } }): Promise<{ data?: unknown; error?: unknown }>
  }
}

export interface PluginInput {
  directory: string
  worktree: string
  /** 1.18.33 passes it; typed optional so a plugin without it fails closed (plugin/scope.ts). */
  client?: SessionClient
}

export type Plugin = (input: PluginInput) => Promise<Hooks>
