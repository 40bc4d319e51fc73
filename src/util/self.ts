// How to start this program again (the MCP server for demo and doctor --live): the compiled binary
// itself, or bun with the entry file when running from source.
export function selfCommand(): string[] {
  const compiled = import.meta.path.startsWith("/$bunfs/")
  return compiled ? [process.execPath] : [process.execPath, `${import.meta.dir}/../cli/main.ts`]
}
