// doctor's roles check: a role whose prompt file cannot be read fails with the fix; a subagent file of the
// person's that is no role here is named with its reason and fails nothing (it may be Claude Code's alone).
import { expect, test } from "bun:test"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { resolvePaths } from "../../src/config/paths"
import { ConfigSchema } from "../../src/config/schema"
import type { DoctorContext } from "../../src/doctor/check"
import { roles } from "../../src/doctor/roles"
import { tempDir } from "../helpers/temp"

const contextOf = (home: string, roles: unknown): DoctorContext =>
  ({
    paths: resolvePaths({
      home,
      xdgConfigHome: `${home}/.config`,
      xdgDataHome: `${home}/.local/share`,
      xdgStateHome: `${home}/.local/state`,
      xdgCacheHome: `${home}/.cache`,
    }),
    config: ConfigSchema.parse({ version: 1, roles }),
  }) as DoctorContext

test("a role's missing prompt file fails with its fix; control: with the file there it passes and is listed", async () => {
  await using home = await tempDir("oc-orch-doctor-roles-")
  const prompt = join(home.path, "fixer.md")
  const config = { fixer: { prompt, profile: "write", description: "fixes" } }
  const [missing] = await roles(contextOf(home.path, config))
  expect(missing).toMatchObject({ id: "roles", status: "fail" })
  expect(missing?.fix).toContain("roles.fixer.prompt")
  await writeFile(prompt, "Fix exactly.\n")
  expect(await roles(contextOf(home.path, config))).toEqual([{ id: "roles", status: "pass", detail: "fixer (worker)" }])
})

test("a subagent file that is no role here is named with its reason, and passes", async () => {
  await using home = await tempDir("oc-orch-doctor-roles-")
  await mkdir(join(home.path, ".claude", "agents"), { recursive: true })
  await writeFile(
    join(home.path, ".claude", "agents", "web.md"),
    "---\nname: web\ndescription: fetches\ntools: WebFetch\n---\nFetch.\n",
  )
  const [result] = await roles(contextOf(home.path, {}))
  expect(result?.status).toBe("pass")
  expect(result?.detail).toContain('its tool "WebFetch" has no counterpart')
})
