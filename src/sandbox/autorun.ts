// The names of files that other programs run without asking (Git hooks and config, OpenCode project
// config and plugins, Claude Code and Codex settings, MCP server lists, direnv, editor tasks, CI
// workflows, commit hooks). Shared by the plugin's guards, which refuse writing them, and the
// engine's scan (src/workspace/autorun.ts), which flags what a sandboxed command did to them.

/** Directory names whose whole content runs somewhere. */
export const AUTORUN_DIRS = [".git", ".opencode", ".claude", ".codex", ".husky", ".devcontainer"]
/** File names that run (or name programs that run) wherever they are. */
export const AUTORUN_FILES = ["opencode.json", "opencode.jsonc", ".mcp.json", ".envrc", ".pre-commit-config.yaml"]
/** Paths whose last components run: editor tasks and settings, CI workflows. */
export const AUTORUN_PATHS = [".vscode/tasks.json", ".vscode/settings.json", ".vscode/launch.json", ".github/workflows"]

/** True when a workspace-relative path is (or is inside) something on the lists above. */
export function isAutorunPath(relative: string): boolean {
  const parts = relative.split("/").filter((part) => part && part !== ".")
  if (parts.some((part) => AUTORUN_DIRS.includes(part))) return true
  if (AUTORUN_FILES.includes(parts.at(-1) ?? "")) return true
  const joined = `/${parts.join("/")}`
  return AUTORUN_PATHS.some((path) => joined.endsWith(`/${path}`) || joined.includes(`/${path}/`))
}
