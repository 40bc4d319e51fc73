// The rules that name files acting on their own beside the named list (src/sandbox/autorun-rules.ts),
// table-driven: each of the sixteen files a list once missed is known with the tool that reads it; a
// name invented here is caught by a rule alone; source edits are caught by none.
import { describe, expect, test } from "bun:test"
import { isSourceByType, ruleByPath, ruleOf } from "../../src/sandbox"

const FILE = "meta:file:644:10:1.0:7"
const EXEC = "meta:file:755:10:1.0:7"

describe("ruleOf", () => {
  const table: [string, string | undefined, string | undefined, string][] = [
    [".tool-versions", undefined, FILE, "known:asdf"],
    ["Taskfile.yml", undefined, FILE, "known:task"],
    ["justfile", undefined, FILE, "known:just"],
    [".vimrc", undefined, FILE, "known:vim"],
    [".dir-locals-2.el", undefined, FILE, "known:emacs"],
    [".Rprofile", undefined, FILE, "known:R"],
    [".irbrc", undefined, FILE, "known:irb"],
    [".pryrc", undefined, FILE, "known:pry"],
    [".pdbrc", undefined, FILE, "known:pdb"],
    [".hg/hgrc", undefined, FILE, "known:hg"],
    ["rust-toolchain.toml", undefined, FILE, "known:rustup"],
    [".pnp.cjs", undefined, FILE, "known:yarn"],
    ["gradle.properties", undefined, FILE, "known:gradle"],
    [".bazelrc", undefined, FILE, "known:bazel"],
    [".zlogin", undefined, FILE, "known:zsh"],
    [".venv/bin/activate", undefined, FILE, "known:venv"],
    ["pkg/deep/.frobrc", undefined, FILE, "hidden"],
    ["pkg/.frob/config", FILE, undefined, "hidden"],
    ["Frobfile", undefined, FILE, "root-non-source"],
    ["tools/frob", undefined, EXEC, "executable"],
    ["scripts/build.sh", FILE, EXEC, "mode-change"],
    [".frobrc", EXEC, FILE, "mode-change"],
  ]
  for (const [path, before, after, rule] of table)
    test(`${path} → ${rule}`, () => expect(String(ruleOf(path, "", before, after))).toBe(rule))
})

describe("by path", () => {
  test("source by type at the root is no rule's; the same names below the root are not root files", () => {
    for (const path of ["README.md", "index.ts", "main.go", "setup.sh", "notes.txt"])
      expect(ruleByPath(path, "")).toBeUndefined()
    for (const path of ["Frobfile", "deploy.yml", "tsconfig.json", "Makefile", "data.json"])
      expect(ruleByPath(path, "")).toBe("root-non-source")
    // A workspace below its repository's root (src/ in the repository) has no root files of its own.
    expect(ruleByPath("Frobfile", "src")).toBeUndefined()
    expect(ruleByPath("Frobfile", ["src", ""])).toBe("root-non-source")
    expect(ruleByPath("src/a.ts", "")).toBeUndefined()
  })

  test("what counts as source by its type: a known language's or prose extension, never a hidden name", () => {
    expect(isSourceByType("a.ts")).toBe(true)
    expect(isSourceByType("A.PY")).toBe(true)
    expect(isSourceByType(".ts")).toBe(false)
    expect(isSourceByType("justfile")).toBe(false)
    expect(isSourceByType("x.toml")).toBe(false)
  })
})
