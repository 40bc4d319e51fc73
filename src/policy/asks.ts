// What a delegated session asks of the person: a permission (OpenCode's name and patterns) or questions.
// The relay's rules (relay.ts), its bounds (relay-bounds.ts) and the answers by task_respond
// (relay-respond.ts) all speak of these.

export interface QuestionOption {
  label: string
  description: string
}

export interface Question {
  question: string
  header: string
  options: QuestionOption[]
  multiple?: boolean
  /** True: free text is taken besides the options (OpenCode's question tool never sets it; its API may). */
  custom?: boolean
}

/** What a delegated session asks for: a permission (OpenCode's name and patterns) or questions for the person. */
export type Ask =
  | { kind: "permission"; permission: string; patterns: string[] }
  | { kind: "question"; questions: Question[] }
