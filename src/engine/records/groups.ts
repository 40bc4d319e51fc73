// A delegate_parallel call's group: which tasks it started, on disk under the state dir so that
// task_cancel with the group id (from any MCP server process) cancels every member.
import { randomBytes } from "node:crypto"
import { z } from "zod"
import { fail } from "../../errors"
import { writeJson } from "../../util/fs"
import { readStateFile } from "../../util/state-file"

export const GROUP_ID = /^group_[a-z0-9]+_[a-f0-9]+$/

export const newGroupId = () => `group_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`

const GroupSchema = z.object({
  version: z.literal(1),
  id: z.string().regex(GROUP_ID),
  createdAt: z.string(),
  tasks: z.array(z.string()),
})
export type Group = z.infer<typeof GroupSchema>

export const isGroupId = (id: string) => GROUP_ID.test(id)

export function saveGroup(dir: string, group: Group): Promise<void> {
  return writeJson(`${dir}/${group.id}.json`, group, 0o600)
}

export async function readGroup(dir: string, id: string): Promise<Group> {
  const group = isGroupId(id)
    ? await readStateFile(
        `${dir}/${id}.json`,
        GroupSchema,
        "The group's tasks can still be cancelled one by one (task_list).",
      )
    : undefined
  if (!group)
    throw fail(
      "Usage",
      `No group ${id.slice(0, 80)}.`,
      "Pass the group_id delegate_parallel returned, or cancel its tasks one by one (task_list).",
    )
  return group
}
