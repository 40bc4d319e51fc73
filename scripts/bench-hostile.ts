// i) Hostile text, timed (the tests pin the same properties by counting and by ends reached, never by
//    the clock): a log that is one long line read and digested at 1 MB and 64 MB beside the way it was
//    read before (the remainder split again for every chunk), the digest's patterns on one megabyte
//    built to make them backtrack, and the secret guard on 1 MB and 8 MB of a brief's worst units.
//    Linear work shows as a ratio near the size ratio.
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { findSecrets } from "../src/policy/secrets"
import { createDigester, digestText } from "../src/runner/digest"
import { eachLine } from "../src/runner/logs"
import type { measure } from "./bench-measure"

type Timed = ReturnType<typeof measure>["timed"]

/** The way eachLine read before: `rest + chunk` split again for every chunk (quadratic on one long line). */
async function eachLineBySplitting(file: string, visit: (line: string) => unknown) {
  const decoder = new TextDecoder()
  let rest = ""
  for await (const chunk of Bun.file(file).stream()) {
    const parts = (rest + decoder.decode(chunk, { stream: true })).split("\n")
    rest = parts.pop() ?? ""
    for (const part of parts) visit(part)
  }
  if (rest) visit(rest)
}

export async function benchHostile(timed: Timed, runs: number) {
  const dir = await mkdtemp(`${tmpdir()}/oc-orch-bench-hostile-`)
  try {
    const log = async (megabytes: number) => {
      const file = `${dir}/line-${megabytes}.log`
      await Bun.write(file, `${"x".repeat(megabytes * 1_000_000)}\n(fail) math > adds [0.1ms]\n 1 fail\n`)
      return file
    }
    const [one, many] = [await log(1), await log(64)]
    const digestOf = (read: typeof eachLine) => async (file: string) => {
      const digester = createDigester()
      await read(file, (line) => digester.push(line))
    }
    const now = digestOf(eachLine)
    const before = digestOf(async (file, visit) => {
      await eachLineBySplitting(file, (line) => visit(line, 0, line.length))
      return 0
    })
    const small = await timed("i1) one 1 MB line read and digested", () => now(one), runs)
    const large = await timed("i2) one 64 MB line read and digested", () => now(many), runs)
    const splitSmall = await timed("i3) the same 1 MB, split per chunk (before)", () => before(one), runs)
    const splitLarge = await timed(
      "i4) the same 64 MB, split per chunk (before)",
      () => before(many),
      Math.min(runs, 3),
    )
    const megabyte = `TypeError: boom\n${"  at ".repeat(200_000)}\r\n 1 fail`
    await timed("i5) a 1 MB frame-like line digested", async () => digestText(megabyte), runs)
    const secrets = (megabytes: number) => "sk-".repeat(Math.ceil((megabytes * 1_048_576) / 3))
    const [guardSmall, guardLarge] = [secrets(1), secrets(8)]
    const guardOne = await timed("i6) secret guard on 1 MB of sk-", async () => findSecrets(guardSmall), runs)
    const guardEight = await timed("i7) secret guard on 8 MB of sk-", async () => findSecrets(guardLarge), runs)
    console.log(
      `  64 MB / 1 MB line           ${(large / small).toFixed(1)}x now, ${(splitLarge / splitSmall).toFixed(1)}x ` +
        "split per chunk (linear: ~64x)",
    )
    console.log(`  secret guard 8 MB / 1 MB    ${(guardEight / guardOne).toFixed(1)}x (linear: ~8x)`)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}
