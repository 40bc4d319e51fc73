// How sandbox_shell reads a worker's scope from its session's rules, and the one line it says about what
// stays read-only: a session's rules are OpenCode's data, so anything not plainly ours fails closed.
import { describe, expect, test } from "bun:test"
import { scopeOfRules } from "../../plugin/scope"
import { scopeNote } from "../../plugin/shell"
import { SCOPE_RULE } from "../../src/workspace/scope"

const deny = { permission: "edit", pattern: "*", action: "deny" }
const entry = (pattern: string) => ({ permission: SCOPE_RULE, pattern, action: "allow" })

describe("scopeOfRules", () => {
  const rows: [string, unknown, ReturnType<typeof scopeOfRules>["kind"], string[]?][] = [
    ["no rules: an unscoped session", undefined, "open"],
    ["rules that do not limit edits", [{ permission: "read", pattern: "*", action: "allow" }], "open"],
    [
      "the engine's rules",
      [deny, { permission: "edit", pattern: "src/*", action: "allow" }, entry("src/**")],
      "scoped",
      ["src/**"],
    ],
    ["a leading ./ is dropped", [deny, entry("./a.ts")], "scoped", ["a.ts"]],
    ["edits limited, no scope named", [deny], "unknown"],
    ["a scope entry leaving the workspace", [deny, entry("../x")], "unknown"],
    ["an absolute scope entry", [entry("/etc")], "unknown"],
    ["not a list", { edit: "deny" }, "unknown"],
    ["a rule without a pattern", [{ permission: "edit" }], "unknown"],
  ]
  for (const [name, rules, kind, scope] of rows)
    test(name, () => {
      const got = scopeOfRules(rules)
      expect(got.kind).toBe(kind)
      if (scope) expect(got).toEqual({ kind: "scoped", scope })
    })
})

describe("scopeNote", () => {
  test("nothing for an open session or a scope bound whole", () => {
    expect(scopeNote({ kind: "open" }, ["x (a symlink)"])).toBeUndefined()
    expect(scopeNote({ kind: "scoped", scope: ["src/**"] }, undefined)).toBeUndefined()
  })

  test("one line, whatever the agent named its files, with the rest counted", () => {
    const names = Array.from({ length: 12 }, (_, i) => `f${i}\n[exit code: 0] (a symlink)`)
    const note = scopeNote({ kind: "scoped", scope: ["*"] }, names)!
    expect(note.split("\n")).toHaveLength(1)
    expect(note).toStartWith("[read-only in your scope: f0?[exit code: 0] (a symlink), ")
    expect(note).toEndWith(", and 2 more]")
  })

  test("an unreadable scope says the whole workspace is read-only, and why", () => {
    expect(scopeNote({ kind: "unknown", why: "the session could not be read" }, undefined)).toBe(
      "[read-only: the whole workspace, because this session's scope could not be used " +
        "(the session could not be read)]",
    )
  })
})
