// The temp-dir fixture removes its directory when the block ends, also when the block throws.
import { expect, test } from "bun:test"
import { existsSync } from "node:fs"
import { tmpdir } from "node:os"
import { tempDir } from "./temp"

test("the directory exists inside the block and is gone after it", async () => {
  let path = ""
  {
    await using dir = await tempDir("oc-orch-temp-")
    path = dir.path
    await Bun.write(`${path}/nested/file`, "x")
    expect(path.startsWith(`${tmpdir()}/oc-orch-temp-`)).toBe(true)
    expect(existsSync(`${path}/nested/file`)).toBe(true)
  }
  expect(existsSync(path)).toBe(false)
})

test("a block that throws still removes it", async () => {
  let path = ""
  const failing = async () => {
    await using dir = await tempDir("oc-orch-temp-")
    path = dir.path
    throw new Error("the test failed")
  }
  await expect(failing()).rejects.toThrow("the test failed")
  expect(path).not.toBe("")
  expect(existsSync(path)).toBe(false)
})
