// The task store's index (sqlite-index.ts): listings, key lookups, the ledger and recovery read through
// it, and none of the store's guarantees is weaker for it. Real processes are killed mid-write and
// race each other; the index file is filled with garbage, removed, and swapped for a symlink.
import { Database } from "bun:sqlite"
import { afterAll, describe, expect, test } from "bun:test"
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs"
import { mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { TaskStore } from "../../src/engine/store/task-store"
import { writeJson } from "../../src/util/fs"
import { spawn } from "../../src/util/process"
import { sampleRecord } from "./_records"

const CHILD = `${import.meta.dir}/_store-child.ts`
const made: string[] = []

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(`${tmpdir()}/oc-orch-index-`)
  made.push(dir)
  return dir
}

afterAll(async () => {
  for (const dir of made) await rm(dir, { recursive: true, force: true })
})

async function seeded(count: number, fields: (i: number) => Partial<TaskRecord> = () => ({})) {
  const dir = await freshDir()
  const store = new TaskStore(dir)
  const records = Array.from({ length: count }, (_, i) => sampleRecord(fields(i)))
  for (const record of records) await store.save(record)
  return { dir, store, records }
}

const onDisk = (dir: string) =>
  readdirSync(dir)
    .filter((name) => /^task_.*\.json$/.test(name))
    .map((name) => name.slice(0, -5))
    .sort()

const idsOf = (records: { id: string }[]) => records.map((record) => record.id).sort()

/** Lines the child printed so far, read until `enough` says stop or the child ends. */
async function readLines(stream: ReadableStream<Uint8Array>, enough: (lines: string[]) => boolean) {
  const lines: string[] = []
  const reader = stream.getReader()
  let rest = ""
  while (!enough(lines)) {
    const { value, done } = await reader.read()
    if (done) break
    rest += new TextDecoder().decode(value)
    const parts = rest.split("\n")
    rest = parts.pop() ?? ""
    lines.push(...parts)
  }
  reader.releaseLock()
  return lines
}

describe("a SIGKILL mid-save", () => {
  test("every acknowledged record is listed in its last acknowledged state; every record on disk too", async () => {
    const dir = await freshDir()
    for (let round = 0; round < 4; round++) {
      const child = spawn([process.execPath, CHILD, "save", dir, `k${round}`, "0"])
      const lines = await readLines(child.stdout, (seen) => seen.length >= 30 + round * 7)
      process.kill(child.pid, "SIGKILL")
      await child.exited
      const acked = lines.filter((line) => line.startsWith("saved ")).map((line) => line.slice(6))
      expect(acked.length).toBeGreaterThanOrEqual(30)
      const store = new TaskStore(dir)
      const { records, total } = await store.page({})
      // Whatever landed on disk is listed, acknowledged or not (the kill may fall after the file, before the row).
      expect(idsOf(records)).toEqual(onDisk(dir))
      expect(total).toBe(onDisk(dir).length)
      for (const id of acked) expect(records.map((r) => r.id)).toContain(id)
      // The filters agree with the files: every acknowledged task is finished, the rest are what disk says.
      const succeeded = (await store.page({ status: "succeeded" })).records.map((r) => r.id)
      for (const id of acked) expect(succeeded).toContain(id)
      const running = records.filter((r) => r.status === "running").map((r) => r.id)
      expect(idsOf(await store.unfinished())).toEqual(running.sort())
      const key = `k${round}-${acked.length - 1}`
      expect((await store.findByKey(key))?.idempotencyKey).toBe(key)
      store.views.index.close()
    }
  }, 120_000)

  test("control: a crash between record and row leaves the raw index behind; the listing catches up", async () => {
    const { dir, store, records } = await seeded(5)
    // What a save killed after its file landed leaves: a new file with no row, and a changed file
    // whose row is older, with the dead writer's intent.
    const planted = sampleRecord({ status: "failed" })
    await writeJson(`${dir}/${planted.id}.json`, planted)
    const changed = { ...records[0]!, status: "failed" as const, revision: 2, updatedAt: new Date().toISOString() }
    await writeJson(`${dir}/${changed.id}.json`, changed)
    const db = new Database(store.views.index.file)
    db.query("INSERT INTO intents (id, pid, at) VALUES (?, ?, ?)").run(changed.id, 2 ** 22 + 11, Date.now())
    const raw = db.query("SELECT id, status FROM tasks").all() as { id: string; status: string }[]
    db.close()
    expect(raw.map((row) => row.id)).not.toContain(planted.id)
    expect(raw.find((row) => row.id === changed.id)?.status).toBe("succeeded")
    // The protected path: both are listed as they are on disk, and the status filter agrees.
    const failed = await store.page({ status: "failed" })
    expect(idsOf(failed.records)).toEqual([changed.id, planted.id].sort())
    expect(failed.total).toBe(2)
    expect((await store.page({})).total).toBe(6)
  })
})

describe("the index file", () => {
  test("garbage in its place is set aside and the index rebuilt from the records", async () => {
    const { dir, store, records } = await seeded(12)
    const file = store.views.index.file
    store.views.index.close()
    for (const suffix of ["-wal", "-shm"]) await rm(`${file}${suffix}`, { force: true })
    await writeFile(file, "\u0000\u0001 this is not a database ".repeat(200))
    const again = new TaskStore(dir)
    const listed = await again.page({ limit: 5 })
    expect(listed.total).toBe(12)
    // Control: the listing matches the records themselves, read one by one.
    expect(listed.records.map((r) => r.id)).toEqual((await again.list()).slice(0, 5).map((r) => r.id))
    expect(idsOf((await again.page({})).records)).toEqual(idsOf(records))
    expect(readdirSync(`${dir}/.index`).some((name) => name.includes(".corrupt"))).toBe(true)
  })

  test("a missing index (a first start over old records) is built from them", async () => {
    const dir = await freshDir()
    const old = Array.from({ length: 9 }, (_, i) => sampleRecord({ idempotencyKey: `old-${i}` }))
    for (const record of old) await writeJson(`${dir}/${record.id}.json`, record)
    const store = new TaskStore(dir)
    expect(existsSync(`${dir}/.index`)).toBe(false)
    expect(idsOf((await store.page({})).records)).toEqual(idsOf(old))
    expect((await store.findByKey("old-4"))?.id).toBe(old[4]!.id)
    expect((await store.ledger()).length).toBe(9)
  })

  test("a symlink in its place (or its directory's) is moved aside, never followed or written through", async () => {
    const { dir, store, records } = await seeded(6)
    const file = store.views.index.file
    store.views.index.close()
    const outside = await freshDir()
    await writeFile(`${outside}/precious`, "precious bytes")
    for (const suffix of ["", "-wal", "-shm"]) await rm(`${file}${suffix}`, { force: true })
    await symlink(`${outside}/precious`, file)
    await symlink(`${outside}/precious`, `${file}-wal`)
    const again = new TaskStore(dir)
    const extra = sampleRecord()
    await again.save(extra)
    expect(idsOf((await again.page({})).records)).toEqual(idsOf([...records, extra]))
    expect(readFileSync(`${outside}/precious`, "utf8")).toBe("precious bytes")
    expect(lstatSync(file).isFile()).toBe(true)
    again.views.index.close()
    // The whole directory swapped for a link to a directory outside.
    await rm(`${dir}/.index`, { recursive: true, force: true })
    await symlink(outside, `${dir}/.index`)
    const third = new TaskStore(dir)
    await third.save(sampleRecord())
    expect((await third.page({})).total).toBe(8)
    expect(await readdir(outside)).toEqual(["precious"])
    expect(lstatSync(`${dir}/.index`).isDirectory()).toBe(true)
    third.views.index.close()
  })

  test("a state dir reached through a symlinked ancestor (a linked HOME) keeps its index", async () => {
    const { dir, records } = await seeded(3)
    const link = `${await freshDir()}/home`
    await symlink(dir, link)
    const through = new TaskStore(link)
    const extra = sampleRecord({ idempotencyKey: "through-a-link" })
    await through.save(extra)
    expect(idsOf((await through.page({})).records)).toEqual(idsOf([...records, extra]))
    expect((await through.findByKey("through-a-link"))?.id).toBe(extra.id)
    // The index is in use, not given up for the full scan: its row for the new record is there.
    const db = new Database(`${dir}/.index/records.sqlite`)
    expect(db.query("SELECT id FROM tasks WHERE id = ?").get(extra.id)).toEqual({ id: extra.id })
    db.close()
    through.views.index.close()
  })

  test("control: opened plainly, the same symlink is written through", async () => {
    const outside = await freshDir()
    await writeFile(`${outside}/precious`, "")
    const dir = await freshDir()
    await symlink(`${outside}/precious`, `${dir}/records.sqlite`)
    const db = new Database(`${dir}/records.sqlite`)
    db.exec("CREATE TABLE t (x)")
    db.close()
    expect(readFileSync(`${outside}/precious`).subarray(0, 15).toString()).toBe("SQLite format 3")
  })
})

describe("rows and records", () => {
  test("a garbage row is read again from its record; the others are counted as they were", async () => {
    const { store, records } = await seeded(8)
    await store.page({})
    const db = new Database(store.views.index.file)
    db.query("UPDATE tasks SET ledger = 'garbage' WHERE id = ?").run(records[2]!.id)
    db.query("UPDATE tasks SET ledger = ? WHERE id = ?").run(
      JSON.stringify({
        role: "scout",
        status: "x",
        result: {
          cost: "a lot",
        },
      }),
      records[3]!.id,
    )
    db.close()
    const ledger = await store.ledger()
    expect(ledger).toHaveLength(8)
    expect(ledger.every((entry) => entry.result?.cost === 0.001)).toBe(true)
    // Repaired: the rows hold the records' numbers again.
    const check = new Database(store.views.index.file)
    const bad = check.query("SELECT count(*) AS n FROM tasks WHERE ledger = 'garbage'").get() as { n: number }
    check.close()
    expect(bad.n).toBe(0)
  })

  test("recovery reads only unfinished records: finished ones are not opened", async () => {
    const { dir, store, records } = await seeded(30, (i) => (i < 2 ? { status: "running" } : {}))
    await store.page({})
    // Garbage written in place over every finished record: any read of one sets it aside.
    for (const record of records.slice(2)) await writeFile(`${dir}/${record.id}.json`, "{ garbage")
    const open = await store.unfinished()
    expect(idsOf(open)).toEqual(idsOf(records.slice(0, 2)))
    expect(store.takeSetAside()).toEqual([])
    // Control: the full scan does open them, and sets each aside.
    await store.list()
    expect(store.takeSetAside()).toHaveLength(28)
  })

  test("a page reads its own records only, and filters by status and workspace", async () => {
    const { store, records } = await seeded(40, (i) => ({
      workspace: i % 2 ? "/work/a" : "/work/a/sub",
      status: i % 3 ? "succeeded" : "failed",
    }))
    const newest = [...records].sort((a, b) => b.createdAt.localeCompare(a.createdAt))
    const inA = await store.page({ inside: "/work/a", limit: 3 })
    expect(inA.total).toBe(40)
    expect(inA.records.map((r) => r.id)).toEqual(newest.slice(0, 3).map((r) => r.id))
    expect((await store.page({ inside: "/work/a/sub" })).total).toBe(20)
    expect((await store.page({ inside: "/work/a/su" })).total).toBe(0)
    const failed = await store.page({ status: "failed", inside: "/work/a/sub" })
    expect(idsOf(failed.records)).toEqual(
      idsOf(records.filter((r) => r.status === "failed" && r.workspace === "/work/a/sub")),
    )
  })
})

describe("a full listing out of file descriptors", () => {
  const scanWith = async (dir: string, limit: number) => {
    const child = spawn([
      "/bin/bash",
      "-c",
      `ulimit -n ${limit} && exec "$0" "$@"`,
      process.execPath,
      CHILD,
      "scan",
      dir,
    ])
    const out = await new Response(child.stdout).text()
    await child.exited
    return out.trim()
  }

  test("EMFILE while reading records moves none aside (a healthy record is never called corrupt)", async () => {
    const dir = await freshDir()
    const records = Array.from({ length: 600 }, () => sampleRecord())
    for (const record of records) await writeJson(`${dir}/${record.id}.json`, record)
    // The listing may fail (or, under Bun 1.4.5, end without a word), or answer in full; never in part.
    expect(await scanWith(dir, 150)).not.toMatch(/^listed (?!600$)/)
    // And every record is still where it was (before: 225 of them moved aside at this limit).
    expect(readdirSync(dir).filter((name) => name.includes(".corrupt"))).toEqual([])
    expect(onDisk(dir)).toEqual(idsOf(records))
    // Control: with descriptors to spare the same listing reads all 600.
    expect(await scanWith(dir, 4096)).toBe("listed 600")
    // Two child processes each reading 600 records and checking their rows: more than bun's 5 s on a loaded machine.
  }, 60_000)
})

describe("an index that cannot be written", () => {
  test("a full index (SQLITE_FULL) fails no save; listings read the records; the next process rebuilds", async () => {
    const { dir, store, records } = await seeded(5)
    const db = await store.views.index.ready()
    // The index can grow no further: every insert that needs a page fails as on a full disk.
    const { page_count } = db.query("PRAGMA page_count").get() as { page_count: number }
    db.exec(`PRAGMA max_page_count = ${page_count}`)
    const more = Array.from({ length: 150 }, () => sampleRecord({ idempotencyKey: `full-${Math.random()}` }))
    for (const record of more) await store.save(record)
    // A change to a record the index already has, made while the index is off: its row says succeeded.
    await store.save({ ...records[0]!, status: "failed", revision: 2 })
    const all = [...records, ...more]
    const listed = await store.page({})
    expect(listed.total).toBe(155)
    expect(idsOf(listed.records)).toEqual(idsOf(all))
    expect((await store.findByKey(more[140]!.idempotencyKey!))?.id).toBe(more[140]!.id)
    expect((await store.ledger()).length).toBe(155)
    // Control: the index itself did miss writes; the listings above did not come from it.
    expect((db.query("SELECT count(*) AS n FROM tasks").get() as { n: number }).n).toBeLessThan(155)
    expect(db.query("SELECT status FROM tasks WHERE id = ?").get(records[0]!.id)).toEqual({ status: "succeeded" })
    store.views.index.close()
    // The next process (here: a fresh store) filters by status before anything reads that record.
    const next = new TaskStore(dir)
    expect((await next.page({ status: "failed" })).records.map((r) => r.id)).toEqual([records[0]!.id])
    expect(idsOf((await next.page({})).records)).toEqual(idsOf(all))
    next.views.index.close()
  })
})

describe("a rebuild while another store lists", () => {
  // A rebuild (a new index, or one a failed write marked stale) reads every file; it never empties the
  // rows first, or a listing by another process meanwhile would count none of the records.
  test("every listing made during another store's rebuild counts every record", async () => {
    const { dir } = await seeded(600)
    const lister = new TaskStore(dir)
    // A directory quiet for a second is trusted as synced: the lister's own catch-up then reads no names.
    await Bun.sleep(1_100)
    expect((await lister.page({})).total).toBe(600)
    // Unmarked as built: the next store to open the index rebuilds it (the lister, open already, does not).
    const db = new Database(`${dir}/.index/records.sqlite`)
    db.run("DELETE FROM meta WHERE key = 'built'")
    db.close()
    const rebuilding = new TaskStore(dir).page({ limit: 1 })
    let done = false
    void rebuilding.then(() => (done = true))
    const totals = new Set<number>()
    let listings = 0
    while (!done) {
      totals.add((await lister.page({ limit: 5 })).total)
      listings++
    }
    expect((await rebuilding).total).toBe(600)
    expect(listings).toBeGreaterThan(1) // control: the listings ran while the rebuild did
    expect([...totals]).toEqual([600])
  })
})

describe("two processes sharing the store", () => {
  test("both list and write at once; nothing is lost and each listing counts what its writer saved", async () => {
    const dir = await freshDir()
    const children = ["a", "b"].map((tag) => ({
      tag,
      child: spawn([process.execPath, CHILD, "mixed", dir, tag, "60"]),
    }))
    const outputs = await Promise.all(
      children.map(async ({ tag, child }) => {
        const lines = await readLines(child.stdout, () => false)
        const errors = await new Response(child.stderr).text()
        return { tag, lines, code: await child.exited, errors }
      }),
    )
    for (const { lines, code, errors } of outputs) {
      expect({ code, errors }).toEqual({ code: 0, errors: "" })
      const saved = lines.filter((line) => line.startsWith("saved "))
      expect(saved).toHaveLength(60)
      const listed = lines.filter((line) => line.startsWith("listed ")).map((line) => line.split(" ").map(Number))
      // After its n-th save a writer sees at least its n records, and exactly n in its own workspace.
      for (const [n, [, total, page, mine]] of listed.entries()) {
        expect(total).toBeGreaterThanOrEqual(n + 1)
        expect(page).toBe(Math.min(20, total!))
        expect(mine).toBe(n + 1)
      }
    }
    const store = new TaskStore(dir)
    expect((await store.page({})).total).toBe(120)
    expect(idsOf((await store.page({})).records)).toEqual(onDisk(dir))
    expect((await store.findByKey("b-59"))?.workspace).toBe("/work/b")
  }, 120_000)
})

describe("rows that disagree with their records (the records are the truth)", () => {
  const raw = (store: TaskStore) => new Database(store.views.index.file)
  const rawRow = (store: TaskStore, id: string) => {
    const db = raw(store)
    const row = db.query("SELECT status, finished FROM tasks WHERE id = ?").get(id) as {
      status: string
      finished: number
    } | null
    db.close()
    return row
  }
  /** What the next process sees: a store of its own over the same directory. */
  const next = (dir: string) => new TaskStore(dir)
  const doctorSays = async (dir: string) => {
    const { stateFiles } = await import("../../src/doctor/state-files")
    const results = await stateFiles({ paths: { tasksDir: dir, patchesDir: `${dir}/none` } } as never)
    return results.find((result) => result.id === "task-index")!
  }

  test("a row without a record (a ghost counted by totals and stats) is dropped; doctor names it", async () => {
    const { dir, store, records } = await seeded(6)
    await store.page({})
    const ghost = sampleRecord({ status: "running" }).id
    const db = raw(store)
    db.query(
      `INSERT INTO tasks (id, created, updated, revision, status, finished, place, key, ledger, done)
       SELECT ?, created, updated, revision, 'running', 0, place, key, ledger, NULL FROM tasks WHERE id = ?`,
    ).run(ghost, records[0]!.id)
    db.close()
    // Control: the raw index counts the ghost as a running task.
    expect(rawRow(store, ghost)?.status).toBe("running")
    const after = next(dir)
    expect((await after.page({})).total).toBe(6)
    expect((await after.page({ status: "running" })).total).toBe(0)
    expect(await after.unfinished()).toEqual([])
    expect(rawRow(after, ghost)).toBeNull()
    // Planted again, doctor drops it and says so.
    const again = raw(after)
    again
      .query(
        `INSERT INTO tasks (id, created, updated, revision, status, finished, place, key, ledger, done)
         SELECT ?, created, updated, revision, 'running', 0, place, key, ledger, NULL FROM tasks WHERE id = ?`,
      )
      .run(ghost, records[0]!.id)
    again.close()
    const said = await doctorSays(dir)
    expect(said.detail).toContain(`named a record that is gone, now dropped: ${ghost}`)
    expect(rawRow(after, ghost)).toBeNull()
  })

  test("a record without a row is listed and counted again by the next read; doctor names it", async () => {
    const { dir, store, records } = await seeded(6)
    await store.page({})
    const hidden = records[2]!
    const forget = () => {
      const db = raw(store)
      db.query("DELETE FROM tasks WHERE id = ?").run(hidden.id)
      db.close()
    }
    forget()
    // Control: the raw index, what a listing or stats trusting its rows answers from, holds five.
    const db = raw(store)
    expect(db.query("SELECT n FROM counts WHERE status = 'succeeded'").get()).toEqual({ n: 5 })
    db.close()
    // The next process counts all six, in listings and stats.
    const after = next(dir)
    expect((await after.page({ status: "succeeded" })).total).toBe(6)
    expect((await after.stats()).total.tasks).toBe(6)
    // In this process, a read of the record puts its row back.
    forget()
    expect((await store.read(hidden.id))?.id).toBe(hidden.id)
    expect(rawRow(store, hidden.id)?.status).toBe("succeeded")
    forget()
    expect((await doctorSays(dir)).detail).toContain(`had no row, now listed again: ${hidden.id}`)
    expect((await next(dir).stats()).total.tasks).toBe(6)
  })

  test("a silent status (the row or the file changed with no rename) is set from the record; doctor names it", async () => {
    const { dir, store, records } = await seeded(6)
    await store.page({})
    const edited = records[1]!
    // The file edited in place: same name, same directory mtime, no put after it.
    const file = `${dir}/${edited.id}.json`
    const text = readFileSync(file, "utf8").replace('"status": "succeeded"', '"status": "failed"')
    await writeFile(file, text)
    // Control: the raw row still says succeeded.
    expect(rawRow(store, edited.id)?.status).toBe("succeeded")
    const after = next(dir)
    expect((await after.page({ status: "failed" })).records.map((record) => record.id)).toEqual([edited.id])
    expect((await after.page({ status: "succeeded" })).total).toBe(5)
    // The row itself changed (nothing on disk did): the next process sets it back from the record.
    const other = records[4]!
    const db = raw(after)
    db.query("UPDATE tasks SET status = 'cancelled' WHERE id = ?").run(other.id)
    db.close()
    expect((await next(dir).page({ status: "cancelled" })).total).toBe(0)
    expect(rawRow(after, other.id)?.status).toBe("succeeded")
    // A read in this process repairs it too, and doctor names what it repaired.
    const db2 = raw(after)
    db2.query("UPDATE tasks SET status = 'cancelled' WHERE id = ?").run(other.id)
    db2.close()
    expect((await doctorSays(dir)).detail).toContain(`now set from it: ${other.id}`)
    expect(rawRow(after, other.id)?.status).toBe("succeeded")
  })

  test("a continued task whose row still says succeeded (dated in the future) is listed running and found unfinished", async () => {
    const dir = await freshDir()
    const store = new TaskStore(dir)
    // Its first turn's record carries a date from the future (a clock set back since).
    const record = sampleRecord({ updatedAt: "2099-01-01T00:00:00.000Z" })
    await writeJson(`${dir}/${record.id}.json`, record)
    await store.page({})
    // Control: its row holds that date, which a row ordered by the records' dates would never go back from.
    const db = raw(store)
    expect(db.query("SELECT updated FROM tasks WHERE id = ?").get(record.id)).toEqual({ updated: record.updatedAt })
    db.close()
    // Continued: the record runs again, dated now.
    Object.assign(record, { status: "running", result: undefined, finishedAt: undefined, revision: 2 })
    await store.save(record)
    expect(rawRow(store, record.id)).toEqual({ status: "running", finished: 0 })
    expect((await next(dir).page({ status: "running" })).records.map((r) => r.id)).toEqual([record.id])
    expect((await next(dir).unfinished()).map((r) => r.id)).toEqual([record.id])
  })
})
