// What every policy rule returns when it refuses: the rule, what is wrong, and what the parent does
// instead. The MCP layer turns it into an isError result before any task starts.
export interface Refusal {
  /** The rule's name as the parent sees it: "secret guard", "tier", "sensitive mode". */
  rule: string
  message: string
  /** The next step for the parent, in one sentence. */
  next: string
}
