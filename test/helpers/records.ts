// Reading the state directory the way a test checks it: the `.json` files a folder holds (tasks, locks)
// and the task records in them, as another process may be writing them.
import { readdir, readFile } from "node:fs/promises"
import { newTaskId, type TaskRecord } from "../../src/engine/tasks"

/** The `.json` names in `dir`; none when it does not exist yet. */
export const jsonFiles = async (dir: string): Promise<string[]> =>
  (await readdir(dir).catch(() => [] as string[])).filter((name) => name.endsWith(".json"))

/** The task records in `tasksDir`. A record removed between listing and reading is skipped; garbage throws. */
export async function taskRecords(tasksDir: string): Promise<TaskRecord[]> {
  const read = await Promise.all(
    (await jsonFiles(tasksDir)).map((name) =>
      readFile(`${tasksDir}/${name}`, "utf8").then(
        (text) => JSON.parse(text) as TaskRecord,
        () => undefined,
      ),
    ),
  )
  return read.filter((record): record is TaskRecord => record !== undefined)
}

/** A finished scout's record with no times, as a test plants one; `fields` say what matters to the test. */
export const taskRecord = (fields: Partial<TaskRecord> = {}): TaskRecord => ({
  version: 1,
  id: newTaskId(),
  role: "scout",
  agent: "opencode-orchestrator-scout",
  workspace: "/tmp",
  title: "t",
  writable: false,
  status: "succeeded",
  sessions: [],
  ownerPid: 1,
  createdAt: "",
  updatedAt: "",
  deadline: 0,
  operationMs: 0,
  turns: 1,
  revision: 1,
  progress: [],
  ...fields,
})
