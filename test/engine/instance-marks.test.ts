// The three questions for the instance marks (engine/capacity/instance-marks.ts), on the real file system: a
// SIGKILLed holder's mark, garbage in the directory, and the directory swapped for something else.
import { afterAll, beforeAll, describe, expect, test } from "bun:test"
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { InstanceMarks } from "../../src/engine/capacity/instance-marks"
import { spawn } from "../../src/util/process"

let root: string
beforeAll(async () => {
  root = await mkdtemp(`${tmpdir()}/oc-orch-marks-`)
})
afterAll(() => rm(root, { recursive: true, force: true }))

const REPO = "/some/repository"
const released = (marks: InstanceMarks) => marks.releasing(REPO, async () => true)

/** The name `use` writes for REPO, with another pid. */
async function markNamed(dir: string, pid: number) {
  const probe = new InstanceMarks(dir)
  const unmark = await probe.use(REPO)
  const [name] = (await readdir(dir)).filter((entry) => entry.includes(".use."))
  await unmark()
  const forged = (name as string).replace(/\.use\.\d+\./, `.use.${pid}.`)
  await writeFile(`${dir}/${forged}`, "")
  return forged
}

describe("instance marks", () => {
  test("a use in progress keeps a release out; once it ends the release runs (control)", async () => {
    const marks = new InstanceMarks(`${root}/plain`)
    const unmark = await marks.use(REPO)
    expect(await released(marks)).toBe(false)
    await unmark()
    expect(await released(marks)).toBe(true)
  })

  test("SIGKILL: a dead holder's mark counts for nothing and is removed; a live one's holds (control)", async () => {
    const dir = `${root}/killed`
    const child = spawn(["sleep", "60"])
    const forged = await markNamed(dir, child.pid)
    const marks = new InstanceMarks(dir)
    expect(await released(marks)).toBe(false)
    // No grace: the holder dies without a chance to remove its mark.
    await child.kill(0)
    await child.exited
    expect(await released(marks)).toBe(true)
    expect(await readdir(dir)).not.toContain(forged)
  })

  test("garbage: names of any other shape, a directory, a mark for another repository are ignored", async () => {
    const dir = `${root}/garbage`
    await mkdir(`${dir}/${"f".repeat(32)}.use.1.0`, { recursive: true })
    await writeFile(`${dir}/not-a-mark`, "garbage")
    await writeFile(`${dir}/${"0".repeat(32)}.use.${process.pid}.0`, "")
    expect(await released(new InstanceMarks(dir))).toBe(true)
  })

  test("swapped: the marks directory replaced by a file fails closed: no release, and a use still goes on", async () => {
    const dir = `${root}/swapped`
    await writeFile(dir, "not a directory")
    const marks = new InstanceMarks(dir)
    expect(await marks.releasing(REPO, async () => true).catch(() => false)).toBe(false)
    await expect(marks.use(REPO)).rejects.toThrow()
  })
})
