// The test command (README, .ci/run): builds the binary the end-to-end tests run, then `bun test`,
// and ends with the one summary line the landing check reads: `N passed, N failed`.
import { run } from "../src/util/process"

const build = await run(["bun", "scripts/build.ts", "--host-only"], { cwd: `${import.meta.dir}/..` })
if (build.code !== 0) {
  process.stderr.write(build.stdout + build.stderr)
  console.log("0 passed, 1 failed")
  process.exit(1)
}

const proc = Bun.spawn(["bun", "test", "--timeout", "120000", ...process.argv.slice(2)], {
  cwd: `${import.meta.dir}/..`,
  stdout: "inherit",
  stderr: "pipe",
})
// bun test writes its report to stderr; pass it through and keep it to read the totals.
let report = ""
const decoder = new TextDecoder()
for await (const chunk of proc.stderr) {
  const text = decoder.decode(chunk, { stream: true })
  report += text
  process.stderr.write(text)
}
const code = await proc.exited
// A failure's own lines are far above the end of a long run, where a CI log's tail no longer reaches:
// each failed test's last lines and each unhandled error are printed again, just above the summary.
const recap = failureRecap(report)
if (recap) process.stderr.write(`\n# failures again, with their last lines\n${recap}`)
const count = (label: string) => Number(report.match(new RegExp(`^\\s*(\\d+) ${label}$`, "m"))?.[1] ?? 0)
const passed = count("pass")
const failed = count("fail") + (code !== 0 && count("fail") === 0 ? 1 : 0)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 ? 1 : 0)

function failureRecap(text: string, perFailure = 30): string {
  const lines = text.split("\n")
  const blocks: string[] = []
  let start = 0
  for (const [i, line] of lines.entries()) {
    if (/^\((pass|skip|todo)\)/.test(line) || /^test\/.*:$/.test(line)) start = i + 1
    else if (line.startsWith("(fail)")) {
      // Blocks are printed once: bun lists the failures again at the end, after "N tests failed:".
      if (blocks.some((block) => block.endsWith(line))) continue
      blocks.push(lines.slice(Math.max(start, i - perFailure), i + 1).join("\n"))
      start = i + 1
    } else if (/^# Unhandled error/.test(line)) blocks.push(lines.slice(i, i + perFailure).join("\n"))
  }
  return blocks.map((block) => `${block}\n`).join("\n")
}
