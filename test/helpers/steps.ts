// The steps a scripted model's turn is written in, as the escape and plugin batteries use them: the
// tool calls an agent makes and the report that ends a turn with what the tools answered.

/** The agents as OpenCode knows them, spelled out so a renamed agent fails the tests. */
export const SCOUT = "opencode-orchestrator-scout"
export const WORKER = "opencode-orchestrator-worker"

/** The last step of a turn: a report quoting every tool's output. */
export const done = { text: "report: {{toolOutputs}}" }

export const shell = (command: string) => ({ tool: "sandbox_shell", args: { command } })
export const read = (filePath: string) => ({ tool: "read", args: { filePath } })
export const write = (filePath: string, content: string) => ({ tool: "write", args: { filePath, content } })
