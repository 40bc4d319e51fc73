// The four ways a file changes, as git reports them and the parent reads them in a result, a patch and an
// apply. Declared once, here, with nothing imported: the MCP tools name it in their schemas at start.
export const CHANGE_KINDS = ["added", "modified", "deleted", "renamed"] as const
export type ChangeKind = (typeof CHANGE_KINDS)[number]
