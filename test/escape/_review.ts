// What both review batteries (a patch, a cwd) give the scripted reviewer: the sound and the planted-bug
// versions of calc.ts, and the two verdicts it answers with, as the review's output schema takes them.

/** A final answer step. */
export const say = (text: string) => ({ text })
export const SOUND = "export const add = (a: number, b: number) => a + b\n"
/** The planted bug, on line 2 (the finding CHANGES names). */
export const BUGGY = "// adds two numbers\nexport const add = (a: number, b: number) => a - b\n"
export const APPROVE = '{"verdict":"approve","findings":[]}'
export const CHANGES = JSON.stringify({
  verdict: "request_changes",
  findings: [{ file: "calc.ts", line: 2, severity: "blocker", note: "add subtracts" }],
})
