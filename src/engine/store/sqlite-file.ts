// Opening the task index's database file (sqlite-index.ts) so that nothing in its place is followed or
// trusted: a symlink, FIFO or directory where the file, its -wal or -shm, or its directory should be is
// moved aside first (rename moves a link, not its target), the database is opened with
// SQLITE_OPEN_NOFOLLOW (a link placed after that check is refused, not followed), and a file that is
// not a database is moved aside and a new one started (the index is rebuilt from the records).
import { constants, Database } from "bun:sqlite"
import { chmod, lstat, mkdir, realpath, rename } from "node:fs/promises"
import { basename, dirname } from "node:path"
import { LEDGER_TABLES } from "../ledger"
import { STATUSES } from "../records"

/** sqlite3.h SQLITE_OPEN_NOFOLLOW: the database file must not be a symbolic link (bun has no name for it). */
const OPEN_NOFOLLOW = 0x01000000
const SCHEMA = 1

/**
 * Rows per status, kept by triggers in the same transaction as the rows, so an unfiltered or
 * status-only listing's total is a lookup of a few rows rather than a count of every row. Every
 * status has its row from the start: an insert inside a trigger would take the outer statement's
 * conflict policy (the upsert's), so the triggers only update.
 */
const COUNTS = `CREATE TABLE IF NOT EXISTS counts (status TEXT PRIMARY KEY, n INTEGER NOT NULL);
  ${STATUSES.map((status) => `INSERT OR IGNORE INTO counts VALUES ('${status}', 0);`).join("\n  ")}
  CREATE TRIGGER IF NOT EXISTS counts_insert AFTER INSERT ON tasks BEGIN
    UPDATE counts SET n = n + 1 WHERE status = new.status;
  END;
  CREATE TRIGGER IF NOT EXISTS counts_delete AFTER DELETE ON tasks BEGIN
    UPDATE counts SET n = n - 1 WHERE status = old.status;
  END;
  CREATE TRIGGER IF NOT EXISTS counts_update AFTER UPDATE OF status ON tasks WHEN old.status <> new.status BEGIN
    UPDATE counts SET n = n - 1 WHERE status = old.status;
    UPDATE counts SET n = n + 1 WHERE status = new.status;
  END;`

/** Moves `path` aside when something other than a regular file (a symlink, a FIFO, a directory) has it. */
async function clearNonFile(path: string, want: "file" | "dir"): Promise<void> {
  const info = await lstat(path).catch(() => undefined)
  if (!info) return
  if (want === "file" ? info.isFile() : info.isDirectory()) return
  // rename(2) moves the link itself, never what it points at.
  await rename(path, `${path}.corrupt-${Date.now()}-${process.pid}`)
}

const BUSY_MS = 10_000

/**
 * Switching to WAL takes the database's exclusive lock without SQLite's busy handler: a first open
 * racing another process's fails at once with SQLITE_BUSY. Retried for as long as busy_timeout waits.
 */
function intoWal(db: Database) {
  const deadline = Date.now() + BUSY_MS
  for (;;) {
    try {
      db.exec("PRAGMA journal_mode = WAL")
      return
    } catch (error) {
      const code = (error as { code?: string }).code ?? ""
      if (!code.startsWith("SQLITE_BUSY") || Date.now() > deadline) throw error
      Bun.sleepSync(5 + Math.random() * 20)
    }
  }
}

/**
 * An index from before the ledger's cells gains their columns here (added, so an older program's
 * writes fail and mark the index stale rather than skip the cells); the cells are summed on first use.
 */
function migrate(db: Database) {
  // One transaction holding the write lock: two processes opening an old index at once add each column once.
  db.transaction(() => addColumns(db)).immediate()
}

function addColumns(db: Database) {
  const has = (table: string, column: string) =>
    (db.query(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((info) => info.name === column)
  if (!has("tasks", "done")) db.exec("ALTER TABLE tasks ADD COLUMN done TEXT")
  // A row without a stamp (an older program's) is read again from its record by the next check.
  if (!has("tasks", "stamp")) db.exec("ALTER TABLE tasks ADD COLUMN stamp TEXT")
  if (!has("intents", "prune")) db.exec("ALTER TABLE intents ADD COLUMN prune INTEGER NOT NULL DEFAULT 0")
  db.exec(`CREATE INDEX IF NOT EXISTS tasks_done ON tasks (done) WHERE done IS NOT NULL;
    CREATE INDEX IF NOT EXISTS tasks_unread ON tasks (id) WHERE ledger = ''`)
}

function openDb(file: string): Database {
  const flags = constants.SQLITE_OPEN_READWRITE | constants.SQLITE_OPEN_CREATE | OPEN_NOFOLLOW
  const db = new Database(file, flags)
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_MS}`)
    intoWal(db)
    db.exec("PRAGMA synchronous = NORMAL")
    db.exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    const version = db.query("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | null
    // Another layout (a newer or older program's): dropped and built again from the records.
    if (version && version.value !== String(SCHEMA))
      db.exec(`DROP TABLE IF EXISTS tasks; DROP TABLE IF EXISTS counts; DROP TABLE IF EXISTS intents;
        DROP TABLE IF EXISTS ledger_cells; DROP TABLE IF EXISTS ledger_durations; DELETE FROM meta`)
    db.exec(`CREATE TABLE IF NOT EXISTS tasks (id TEXT PRIMARY KEY, created TEXT NOT NULL, updated TEXT NOT NULL,
        revision INTEGER NOT NULL, status TEXT NOT NULL, finished INTEGER NOT NULL, place TEXT NOT NULL,
        key TEXT, ledger TEXT NOT NULL, done TEXT, stamp TEXT);
      CREATE INDEX IF NOT EXISTS tasks_created ON tasks (created);
      CREATE INDEX IF NOT EXISTS tasks_status ON tasks (status, created);
      CREATE INDEX IF NOT EXISTS tasks_place ON tasks (place, created);
      CREATE INDEX IF NOT EXISTS tasks_key ON tasks (key) WHERE key IS NOT NULL;
      CREATE INDEX IF NOT EXISTS tasks_open ON tasks (finished, created);
      CREATE TABLE IF NOT EXISTS intents (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, pid INTEGER NOT NULL,
        at INTEGER NOT NULL, prune INTEGER NOT NULL DEFAULT 0);
      ${COUNTS}
      ${LEDGER_TABLES}`)
    migrate(db)
    db.query("INSERT OR REPLACE INTO meta VALUES ('schema', ?)").run(String(SCHEMA))
    return db
  } catch (error) {
    db.close()
    throw error
  }
}

/** Moves the index (and its -wal and -shm) aside, to be built anew. */
export async function setAsideIndex(file: string, code: string) {
  process.stderr.write(`opencode-mcp-orchestrator: the task index ${file} is unusable (${code}); rebuilt\n`)
  // A part already gone (no -wal, no -shm) has nothing to set aside; the index is rebuilt either way.
  for (const suffix of ["", "-wal", "-shm"])
    await rename(`${file}${suffix}`, `${file}${suffix}.corrupt-${Date.now()}`).catch(() => undefined)
}

/**
 * The index database at `file` in `dir`, opened as above. NOFOLLOW refuses a link anywhere in the
 * path, so the path is opened from the records directory's real path (a state dir under a symlinked
 * HOME is the user's own choice): only the index's own directory and file must be no links.
 */
export async function openIndex(dir: string, file: string): Promise<Database> {
  await clearNonFile(dir, "dir")
  await mkdir(dir, { recursive: true, mode: 0o700 })
  for (const suffix of ["", "-wal", "-shm"]) await clearNonFile(`${file}${suffix}`, "file")
  const real = `${await realpath(dirname(dir))}/${basename(dir)}/${basename(file)}`
  let db: Database
  try {
    db = openDb(real)
  } catch (error) {
    const code = (error as { code?: string }).code ?? ""
    if (!/NOTADB|CORRUPT|CANTOPEN/.test(code)) throw error
    await setAsideIndex(file, code)
    db = openDb(real)
  }
  // Like the records (0600): SQLite creates with 0644, and its -wal and -shm take the database's mode.
  await chmod(real, 0o600).catch(() => undefined) // its directory is 0700 already
  return db
}
