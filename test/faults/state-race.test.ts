// A bad state file is moved aside, never a good one that a writer put in its place meanwhile: writes
// are renames, so the set-aside step checks that the name still holds the file it read. A racing
// process replaces a record by rename, alternately bad and good, as fast as it can, while this
// process reads it; every file that ends up moved aside must be a bad one.
import { afterAll, expect, test } from "bun:test"
import { readdir } from "node:fs/promises"
import { z } from "zod"
import { spawn } from "../../src/util/process"
import { readState } from "../../src/util/state-file"
import { tempDir } from "../helpers/temp"

const dir = await tempDir("state-race-")
afterAll(() => dir[Symbol.asyncDispose]())

const Schema = z.object({ good: z.literal(true) })

const WRITER = `
const { renameSync, writeFileSync } = require("node:fs")
const file = process.argv[1]
for (let i = 0; ; i++) {
  writeFileSync(file + ".w", i % 2 ? '{"good": true}' : '{"good": false, "round": ' + i + '}')
  renameSync(file + ".w", file)
}
`

test("a racing writer's good record is never the one moved aside", async () => {
  const file = `${dir.path}/task.json`
  const writer = spawn([process.execPath, "-e", WRITER, file])
  let setAside = 0
  try {
    while (!(await Bun.file(file).exists())) await Bun.sleep(10)
    for (let reads = 0; reads < 1500; reads++) if ((await readState(file, Schema, "test fix")).setAside) setAside++
  } finally {
    await writer.kill()
  }
  const moved = (await readdir(dir.path)).filter((name) => name.includes(".corrupt"))
  expect(moved.length).toBe(setAside)
  // The race ran: bad records were found and moved aside while the writer went on.
  expect(setAside).toBeGreaterThan(0)
  for (const name of moved) expect(await Bun.file(`${dir.path}/${name}`).json()).toMatchObject({ good: false })
}, 120_000)
