// The release workflow, read as data: it must gate on the same setup and tests as CI, package with
// the tag's version for this repository, verify, and publish everything package-release wrote.
import { expect, test } from "bun:test"

interface Step {
  name?: string
  uses?: string
  run?: string
  "working-directory"?: string
}
interface Workflow {
  on: { push: { tags: string[] } }
  permissions: Record<string, string>
  jobs: Record<string, { steps: Step[]; env?: Record<string, string> }>
}

const workflow = Bun.YAML.parse(
  await Bun.file(`${import.meta.dir}/../../.github/workflows/release.yml`).text(),
) as Workflow
const job = workflow.jobs.release!
const runs = job.steps.map((step) => step.run ?? "")
const indexOf = (needle: string) => runs.findIndex((run) => run.includes(needle))

test("runs on version tags with permission to publish", () => {
  expect(workflow.on.push.tags).toEqual(["v*"])
  expect(workflow.permissions.contents).toBe("write")
})

test("sets up and tests exactly as .ci/run does, before packaging", async () => {
  const ci = await Bun.file(`${import.meta.dir}/../../.ci/run`).text()
  for (const command of ["bash scripts/setup.sh --no-demo", "bun run test"]) {
    expect(ci).toContain(command)
    expect(indexOf(command)).toBeGreaterThanOrEqual(0)
    expect(indexOf(command)).toBeLessThan(indexOf("scripts/package-release.ts"))
  }
})

test("packages the tag's version for this repository, then verifies and publishes all assets", () => {
  expect(job.env?.TAG).toBe("${{ github.ref_name }}")
  expect(job.env?.REPOSITORY).toBe("${{ github.repository }}")
  expect(runs[indexOf("package-release")]).toContain(
    'bun scripts/package-release.ts --version "$version" --repository "$REPOSITORY"',
  )
  expect(runs[indexOf("package-release")]).not.toContain("--host-only")
  expect(indexOf("sha256sum --check")).toBeGreaterThan(indexOf("package-release"))
  expect(indexOf("gh release create")).toBeGreaterThan(indexOf("sha256sum --check"))
  expect(runs[indexOf("gh release create")]).toContain("release/*")
})

test("third-party actions are pinned to a commit", () => {
  for (const step of job.steps.filter((s) => s.uses)) expect(step.uses).toMatch(/@[0-9a-f]{40}$/)
})
