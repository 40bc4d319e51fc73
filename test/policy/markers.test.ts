// Where policy markers are looked for: every directory from cwd up, stopping below HOME (or a broad
// system root), whatever `.git` entries lie on the way: no planted `.git` can shorten the search.
import { describe, expect, test } from "bun:test"
import { markerCandidates, markerDirectories } from "../../src/policy/markers"

describe("markerDirectories", () => {
  test.each([
    [
      "a repository under HOME",
      "/home/u/src/repo/pkg",
      "/home/u",
      ["/home/u/src/repo/pkg", "/home/u/src/repo", "/home/u/src"],
    ],
    ["HOME itself", "/home/u", "/home/u", []],
    ["above HOME", "/home", "/home/u", []],
    ["a project outside HOME", "/srv/work/repo", "/home/u", ["/srv/work/repo", "/srv/work"]],
    ["a project in /tmp stops below /tmp", "/tmp/x/repo", "/home/u", ["/tmp/x/repo", "/tmp/x"]],
    ["HOME under /tmp", "/tmp/h/p/repo", "/tmp/h", ["/tmp/h/p/repo", "/tmp/h/p"]],
    ["a sibling of HOME named like it", "/home/u2/repo", "/home/u", ["/home/u2/repo", "/home/u2"]],
  ] as const)("%s", (_, cwd, home, want) => expect(markerDirectories(cwd, home)).toEqual([...want]))
})

describe("markerCandidates", () => {
  test("every marker name in every directory, nearest first, sensitive before insensitive", () => {
    expect(markerCandidates("/home/u/repo/pkg", "/home/u")).toEqual([
      { path: "/home/u/repo/pkg/.opencode-mcp-orchestrator/sensitive", mode: "sensitive" },
      { path: "/home/u/repo/pkg/.claude/sensitive", mode: "sensitive" },
      { path: "/home/u/repo/pkg/.opencode-mcp-orchestrator/insensitive", mode: "insensitive" },
      { path: "/home/u/repo/pkg/.claude/insensitive", mode: "insensitive" },
      { path: "/home/u/repo/.opencode-mcp-orchestrator/sensitive", mode: "sensitive" },
      { path: "/home/u/repo/.claude/sensitive", mode: "sensitive" },
      { path: "/home/u/repo/.opencode-mcp-orchestrator/insensitive", mode: "insensitive" },
      { path: "/home/u/repo/.claude/insensitive", mode: "insensitive" },
    ])
  })
})
