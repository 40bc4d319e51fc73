import { expect, test } from "bun:test"
import { readFlags } from "../../src/config/flags"
import { sessionTitle } from "../../src/engine/title"

test.each([
  ["no label", ["scout", "Find where count is\nthen say so"], "scout · Find where count is"],
  ["a label", ["worker", "Rename count to total", "lane-a"], "lane-a · worker · Rename count to total"],
  ["blank leading lines skipped", ["scout", "\n  \n  Look here  "], "scout · Look here"],
  [
    "brackets dropped: nothing may look like a task id",
    ["scout", "fix [task_abc] now", "[lane]"],
    "lane · scout · fix task_abc now",
  ],
  ["the first line cut to 60", ["runner", "x".repeat(100)], `runner · ${"x".repeat(60)}`],
  ["an empty brief leaves the role", ["scout", "   "], "scout"],
] as const)("%s", (_, args, title) => {
  expect(sessionTitle(...(args as unknown as Parameters<typeof sessionTitle>))).toBe(title)
})

test("the lane label comes from OPENCODE_MCP_ORCHESTRATOR_LABEL through the flags; empty is unset", () => {
  expect(readFlags({ HOME: "/home/a", OPENCODE_MCP_ORCHESTRATOR_LABEL: "lane-a" }).label).toBe("lane-a")
  expect(readFlags({ HOME: "/home/a", OPENCODE_MCP_ORCHESTRATOR_LABEL: "" }).label).toBeUndefined()
})
