// Which mode a workspace is in when the four places that may state one agree, stay silent or
// disagree, and what each mode lets scout, worker and runner do.
import { describe, expect, test } from "bun:test"
import {
  checkMode,
  resolveMode,
  weakenedMode,
  type Delegation,
  type Mode,
  type ModeSourceKind,
  type ModeStatement,
} from "../../src/policy/mode"

const say = (source: ModeSourceKind, mode: Mode): ModeStatement => ({ source, mode, where: source })

const cases: [string, ModeStatement[], Mode, ModeSourceKind | undefined][] = [
  // [situation, statements (in any order), mode, decided by]
  ["nothing stated: blueprint by default", [], "blueprint", undefined],
  ["the argument alone", [say("argument", "insensitive")], "insensitive", "argument"],
  ["the environment alone", [say("environment", "sensitive")], "sensitive", "environment"],
  ["a marker alone", [say("marker", "insensitive")], "insensitive", "marker"],
  ["config alone", [say("config", "sensitive")], "sensitive", "config"],
  [
    "argument before environment, marker and config",
    [
      say("config", "insensitive"),
      say("marker", "blueprint"),
      say("environment", "insensitive"),
      say("argument", "blueprint"),
    ],
    "blueprint",
    "argument",
  ],
  [
    "environment before marker and config",
    [say("config", "blueprint"), say("environment", "insensitive"), say("marker", "blueprint")],
    "insensitive",
    "environment",
  ],
  ["marker before config", [say("config", "blueprint"), say("marker", "insensitive")], "insensitive", "marker"],
  [
    "sensitive in config beats an insensitive argument",
    [say("argument", "insensitive"), say("config", "sensitive")],
    "sensitive",
    "config",
  ],
  [
    "a sensitive marker beats an insensitive argument and environment",
    [say("argument", "insensitive"), say("environment", "blueprint"), say("marker", "sensitive")],
    "sensitive",
    "marker",
  ],
  [
    "both markers present: sensitive wins",
    [say("marker", "insensitive"), say("marker", "sensitive")],
    "sensitive",
    "marker",
  ],
  [
    "several say sensitive: the first read is named",
    [say("config", "sensitive"), say("argument", "sensitive")],
    "sensitive",
    "argument",
  ],
]

describe("resolveMode", () => {
  test.each(cases)("%s", (_, statements, mode, source) => {
    const resolved = resolveMode(statements)
    expect(resolved.mode).toBe(mode)
    expect(resolved.decidedBy?.source).toBe(source)
    expect(resolved.overruled.every((s) => s.mode !== mode)).toBe(true)
    expect(resolved.statements.map((s) => s.source)).toEqual(
      [...statements.map((s) => s.source)].sort((a, b) => order(a) - order(b)),
    )
  })

  test("the overruled statements are the ones that disagreed", () => {
    const resolved = resolveMode([
      say("argument", "insensitive"),
      say("marker", "sensitive"),
      say("config", "sensitive"),
    ])
    expect(resolved.overruled).toEqual([say("argument", "insensitive")])
  })
})

const order = (source: ModeSourceKind) => ["argument", "environment", "marker", "config"].indexOf(source)

const scout: Delegation = { role: "scout" }
const worker = (mechanical: boolean): Delegation => ({ role: "worker", mechanical })
const runner = (workspaceAccess: "read_only" | "writable", networkAccess: "disabled" | "host"): Delegation => ({
  role: "runner",
  workspaceAccess,
  networkAccess,
})

const permissions: [string, Delegation, boolean][] = [
  // [delegation, allowed in sensitive mode]
  ["scout", scout, true],
  ["worker", worker(false), false],
  ["mechanical worker", worker(true), true],
  ["read-only runner", runner("read_only", "disabled"), true],
  ["read-only runner with the host network", runner("read_only", "host"), false],
  ["writable runner", runner("writable", "disabled"), false],
]

describe("checkMode", () => {
  test.each(permissions)("sensitive: %s allowed = %p", (_, delegation, allowed) => {
    const refusal = checkMode(resolveMode([say("marker", "sensitive")]), delegation)
    expect(refusal === undefined).toBe(allowed)
    if (refusal) {
      expect(refusal.rule).toBe("sensitive mode")
      expect(refusal.message).toContain("marker file marker")
      expect(refusal.next.length).toBeGreaterThan(0)
    }
  })

  test.each(["blueprint", "insensitive"] as const)("%s allows every delegation", (mode) => {
    for (const [, delegation] of permissions)
      expect(checkMode(resolveMode([say("argument", mode)]), delegation)).toBeUndefined()
  })
})

describe("weakenedMode", () => {
  const call = (mode: Mode, source = `source of ${mode}`) => ({ mode, source })
  test.each([
    // [previous call's mode, this call's mode, weakened]
    ["sensitive", "blueprint", true],
    ["sensitive", "insensitive", true],
    ["blueprint", "insensitive", true],
    ["sensitive", "sensitive", false],
    ["blueprint", "sensitive", false],
    ["insensitive", "blueprint", false],
    ["blueprint", "blueprint", false],
  ] as [Mode, Mode, boolean][])("%s then %s: weakened = %p", (previous, now, weakened) => {
    const warning = weakenedMode(call(previous), call(now))
    expect(warning !== undefined).toBe(weakened)
    if (warning) expect(warning).toContain(`it was ${previous} (source of ${previous}), now ${now} (source of ${now})`)
  })

  test("a task with no previous call recorded (an older record) gets no warning", () => {
    expect(weakenedMode(undefined, call("blueprint"))).toBeUndefined()
  })
})
