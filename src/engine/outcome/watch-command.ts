// The live view's command line, named in every delegation's result (result.ts, structured.ts). Its own
// module with no imports: the result modules load before the task store the `watch` use case reads.

/** The command a person runs to follow the task live in OpenCode's UI (src/cli/watch.ts). */
export const watchCommand = (taskID: string) => `opencode-mcp-orchestrator watch ${taskID}`
