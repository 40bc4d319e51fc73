// The question a scripted OpenCode session asks in the relay tests (in-memory client and the real
// Claude Code alike): the script step that asks it, and the answer a person picks.
export const QUESTION = {
  question: "Which name should the counting function get?",
  header: "Name",
  options: [
    { label: "countWords", description: "says what it counts" },
    { label: "tally", description: "short" },
  ],
}

/** A turn that asks QUESTION and reports OpenCode's answer line, then one that reports without it. */
export const askingTurns = (noAnswer: string) => [
  { steps: [{ tool: "question", args: { questions: [QUESTION] } }, { text: "Asked. {{lastToolOutput}}" }] },
  { steps: [{ text: noAnswer }] },
]
