// Reading the state directory the way a test checks it: the `.json` files a folder holds (tasks, locks)
// and the task records in them, as another process may be writing them.
import { readdir, readFile } from "node:fs/promises"
import { agentName } from "../../src/agents/names"
import { newTaskId } from "../../src/engine/records/tasks"
import type { TaskRecord } from "../../src/engine/records/record-schema"
import { stateJson } from "../../src/util/sealed"

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

/**
 * A scout the dead process `ownerPid` left `running` at `at`, before its session existed: what a
 * process taking over finds. `fields` give at least its workspace, deadline and brief.
 */
export const orphanRecord = (
  id: string,
  at: string,
  fields: Partial<TaskRecord> & Pick<TaskRecord, "workspace" | "ownerPid" | "deadline" | "brief">,
): TaskRecord =>
  taskRecord({
    id,
    agent: agentName("scout"),
    title: `scout: look [${id}]`,
    status: "running",
    createdAt: at,
    turnStartedAt: at,
    updatedAt: at,
    operationMs: 60_000,
    revision: 0,
    ...fields,
  })

/** A claim's JSON (owners, slots, lanes): claims are sealed (src/util/sealed.ts); a plain one is read as it is. */
export function claimJson(text: string): unknown {
  const body = stateJson(text)
  if ("problem" in body) throw new Error(`a damaged claim: ${body.problem}`)
  return JSON.parse(body.json)
}
