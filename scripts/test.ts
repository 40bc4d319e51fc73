// The test command (README, .ci/run): builds the binary the end-to-end tests run, checks types and lint
// when the whole suite runs, then `bun test`,
// and ends with the one summary line the landing check reads: `N passed, N failed`.
//
// Much of the suite waits (on scripted model steps, deadlines, killed servers), so with no arguments the
// test files are split into `--shards N` groups (3 by default: two shards left about a fifth of 2 cores
// idle, measured 2026-12-07) run as concurrent `bun test`
// processes, balanced by each file's duration in an earlier run (scripts/test-weights.json; a file not
// listed weighs 1 s). Each shard's lines are prefixed with its letter. With file arguments, or
// `--shards 1`, one `bun test` runs them as before. `--load N` adds N busy processes for the run.
import { run } from "../src/util/process"

const root = `${import.meta.dir}/..`
const { value: shardCount, rest: afterShards } = option(process.argv.slice(2), "--shards", 3)
// `--load N` runs N busy processes beside the suite (each spins a core), as a user's busy laptop would:
// the suite must pass under it. They are stopped by PID when the run ends, however it ends.
const { value: loadCount, rest: passThrough } = option(afterShards, "--load", 0)
for (const [name, value, max] of [
  ["--shards", shardCount, 8],
  ["--load", loadCount, 8],
] as const) {
  if (!Number.isInteger(value) || value < (name === "--shards" ? 1 : 0) || value > max) {
    process.stderr.write(`${name} takes a whole number up to ${max}.\n`)
    console.log("0 passed, 1 failed")
    process.exit(2)
  }
}
const load = Array.from({ length: loadCount }, () =>
  Bun.spawn(["bun", "-e", "for (;;) {}"], { stdin: "ignore", stdout: "ignore", stderr: "ignore" }),
)
const stopLoad = () => {
  for (const busy of load) busy.kill("SIGKILL")
}
process.on("exit", stopLoad)
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(130))

/** `name N` taken out of `args`: its number (or `fallback` when absent) and the other arguments. */
function option(args: string[], name: string, fallback: number): { value: number; rest: string[] } {
  const at = args.indexOf(name)
  if (at < 0) return { value: fallback, rest: args }
  return { value: Number(args[at + 1]), rest: args.filter((_, i) => i !== at && i !== at + 1) }
}

const build = await run(["bun", "scripts/build.ts", "--host-only"], { cwd: root })
if (build.code !== 0) {
  process.stderr.write(build.stdout + build.stderr)
  console.log("0 passed, 1 failed")
  process.exit(1)
}

// A whole run (no files named) checks types, lint and format first: any of them fails the run before the
// long part (and the report still ends with the summary line).
if (passThrough.length === 0) {
  for (const check of ["typecheck", "lint"]) {
    const result = await run(["bun", "run", check], { cwd: root })
    if (result.code !== 0) {
      process.stderr.write(`bun run ${check} failed:\n${result.stdout}${result.stderr}`)
      console.log("0 passed, 1 failed")
      process.exit(1)
    }
  }
}

const groups = passThrough.length || shardCount === 1 ? [passThrough] : await shards(shardCount)
const outcomes = await Promise.all(
  groups.map((files, i) => testShard(files, groups.length > 1 ? `[${String.fromCharCode(97 + i)}] ` : "")),
)
// A failure's own lines are far above the end of a long run, where a CI log's tail no longer reaches:
// each failed test's last lines and each unhandled error are printed again, just above the summary.
const recap = outcomes.map((outcome) => failureRecap(outcome.report)).join("")
if (recap) process.stderr.write(`\n# failures again, with their last lines\n${recap}`)
const passed = outcomes.reduce((sum, outcome) => sum + outcome.passed, 0)
const failed = outcomes.reduce((sum, outcome) => sum + outcome.failed, 0)
console.log(`${passed} passed, ${failed} failed`)
process.exit(failed > 0 ? 1 : 0)

/** Every test file, in `count` groups of about equal weight: heaviest first, each to the lightest group. */
async function shards(count: number): Promise<string[][]> {
  const weights: Record<string, number> = await Bun.file(`${import.meta.dir}/test-weights.json`).json()
  const files = [...new Bun.Glob("test/**/*.test.ts").scanSync({ cwd: root })]
  const weightOf = (file: string) => weights[file] ?? 1
  files.sort((a, b) => weightOf(b) - weightOf(a) || a.localeCompare(b))
  const groups = Array.from({ length: count }, () => ({ files: [] as string[], weight: 0 }))
  for (const file of files) {
    const lightest = groups.reduce((least, group) => (group.weight < least.weight ? group : least))
    lightest.files.push(`./${file}`)
    lightest.weight += weightOf(file)
  }
  return groups.map((group) => group.files).filter((group) => group.length > 0)
}

/** One `bun test` over `files`, its report (bun writes it to stderr) passed through line by line with `prefix`. */
async function testShard(files: string[], prefix: string) {
  const proc = Bun.spawn(["bun", "test", "--timeout", "120000", ...files], {
    cwd: root,
    stdout: "pipe",
    stderr: "pipe",
  })
  const echo = async (stream: ReadableStream<Uint8Array>, into: NodeJS.WriteStream) => {
    let text = ""
    let pending = ""
    const decoder = new TextDecoder()
    for await (const chunk of stream) {
      const part = decoder.decode(chunk, { stream: true })
      text += part
      const lines = (pending + part).split("\n")
      pending = lines.pop() ?? ""
      if (lines.length) into.write(lines.map((line) => `${prefix}${line}\n`).join(""))
    }
    if (pending) into.write(`${prefix}${pending}\n`)
    return text
  }
  const [, report] = await Promise.all([echo(proc.stdout, process.stdout), echo(proc.stderr, process.stderr)])
  const code = await proc.exited
  const count = (label: string) => Number(report.match(new RegExp(`^\\s*(\\d+) ${label}$`, "m"))?.[1] ?? 0)
  const failed = count("fail")
  // A shard that exits non-zero with no failed test (a crash, an error outside any test) is one failure.
  return { report, passed: count("pass"), failed: failed + (code !== 0 && failed === 0 ? 1 : 0) }
}

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
