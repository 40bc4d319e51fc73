// A process using the task store the way an MCP server does, for the index tests. `save <dir> <tag> <n>`
// saves n new records one after another (n = 0: until killed), each running then finished, and prints
// each id once its second save has resolved. `mixed <dir> <tag> <n>` does the same with a page listing
// after every save, printing the page's total. `scan <dir>` lists every record once. A line is printed only once what it names is acknowledged.
import { TaskStore } from "../../src/engine/store/task-store"
import { sampleRecord } from "./_records"

const [mode, dir, tag, count] = process.argv.slice(2) as [string, string, string, string]
const store = new TaskStore(dir)
if (mode === "scan") {
  // `scan <dir>`: one full listing, every record read (the path retention and doctor take).
  const outcome = await store.list().then(
    (records) => `listed ${records.length}`,
    (error: NodeJS.ErrnoException) => `failed ${error.code}`,
  )
  process.stdout.write(`${outcome}\n`)
  process.exit(0)
}
const limit = Number(count) || Number.POSITIVE_INFINITY
for (let i = 0; i < limit; i++) {
  const record = sampleRecord({ workspace: `/work/${tag}`, idempotencyKey: `${tag}-${i}`, status: "running" })
  await store.save(record)
  // Then finished, as a task is: the kill may fall between the change to the file and the one to its row.
  const { result } = sampleRecord({ workspace: `/work/${tag}` })
  Object.assign(record, { status: "succeeded", finishedAt: new Date().toISOString(), revision: 2, result })
  await store.save(record)
  process.stdout.write(`saved ${record.id}\n`)
  if (mode === "mixed") {
    const { total, records } = await store.page({ limit: 20 })
    const mine = await store.page({ inside: `/work/${tag}`, limit: 5 })
    process.stdout.write(`listed ${total} ${records.length} ${mine.total}\n`)
  }
}
