// A delegated session's title, as a person sees it in the OpenCode TUI: whose lane it is, the role,
// and the brief's first line. newRecord appends ` [task_…]`: recovery finds a session by that id, so
// nothing here may look like one (brackets are dropped from what the caller wrote).
import type { Role } from "../config/schema"

export const TITLE_LIMITS = { label: 40, line: 60 } as const

const clean = (text: string, max: number) => text.replace(/[[\]]/g, "").replace(/\s+/g, " ").trim().slice(0, max).trim()

/** `lane-a · scout · Find where count is`, the label left out when there is none. */
export function sessionTitle(role: Role, brief: string, label?: string, userRole?: string): string {
  const line = clean(brief.split("\n").find((text) => text.trim()) ?? "", TITLE_LIMITS.line)
  const lane = label ? clean(label, TITLE_LIMITS.label) : ""
  const who = userRole ? `${role}:${clean(userRole, TITLE_LIMITS.label)}` : role
  return [lane, who, line].filter(Boolean).join(" · ")
}
