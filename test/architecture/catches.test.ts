// An error dropped on purpose says why: every place in src/ and plugin/ that swallows one (a catch
// block that neither rethrows nor reads its error, a `.catch` or `.then` rejection handler that takes
// no error or ignores it, a `finally` that returns or throws over it) has a comment on its line, the
// two lines before it, or the first line of its block. A dropped error with no reason is how a failure
// turns into a silent wrong answer; the reason is what a reader needs to judge it.
import { describe, expect, test } from "bun:test"
import { swallows, unexplained } from "./_swallows"

const ROOT = `${import.meta.dir}/../..`

const lines = (source: string) => unexplained(source).map((swallow) => `${swallow.line} ${swallow.form}`)

describe("the detector", () => {
  test.each([
    ["an empty catch", "try {\n  a()\n} catch {}\n", "3 catch block"],
    ["a catch that returns", "try {\n  a()\n} catch {\n  return undefined\n}\n", "3 catch block"],
    ["a catch whose error is never read", "try {\n  a()\n} catch (error) {\n  b()\n}\n", "3 catch block"],
    ["a .catch with no parameter", "await rm(x).catch(() => undefined)\n", "1 .catch()"],
    ["a .catch returning a fallback", "const a = await f().catch(() => [] as string[])\n", "1 .catch()"],
    ["a .catch ignoring its error", "await f().catch((e) => {\n  done()\n})\n", "1 .catch()"],
    ["an async function handler", "await f().catch(async function () {\n  return 1\n})\n", "1 .catch()"],
    ["a .catch on its own line", "await f()\n  .text()\n  .catch(() => '0')\n", "3 .catch()"],
    ["a .then rejection handler", "await f().then(\n  () => true,\n  () => false,\n)\n", "1 .then(_, onRejected)"],
    ["a finally that returns", "try {\n  a()\n} finally {\n  return 1\n}\n", "3 finally that returns or throws"],
  ])("control: %s without a reason is found", (_, source, found) => {
    expect(lines(`const x = 1\n${source}`)).toEqual([found.replace(/^\d+/, (n) => String(Number(n) + 1))])
  })

  test.each([
    ["a reason above", "// gone already is fine\nawait rm(x).catch(() => undefined)\n"],
    ["a reason on the line", "await rm(x).catch(() => {}) // best effort: the caller reports\n"],
    ["a reason inside the block", "try {\n  a()\n} catch {\n  // not JSON: no claim\n  return undefined\n}\n"],
    ["a reason inside an empty block", "try {\n  a()\n} catch {\n  // the next pass tries again\n}\n"],
    ["a reason in a doc comment", "/**\n * Missing is fine.\n */\nawait rm(x).catch(() => undefined)\n"],
  ])("%s explains it", (_, source) => {
    expect(lines(source)).toEqual([])
  })

  test.each([
    ["a catch that rethrows", "try {\n  a()\n} catch (error) {\n  if (gone(error)) return\n  throw error\n}\n"],
    ["a catch that reads its error", "try {\n  a()\n} catch (error) {\n  return fail(String(error))\n}\n"],
    ["a .catch that reads its error", "await f().catch((error) => log(error))\n"],
    ["a .catch handed to a named function", "await f().catch(reject)\n"],
    ["a .then with one handler", "await f().then(() => true)\n"],
    ["a finally that only cleans up", "try {\n  a()\n} finally {\n  close()\n}\n"],
  ])("%s is not a swallow", (_, source) => {
    expect(swallows(source)).toEqual([])
  })

  test.each([
    ["a string", 'const a = "} catch {}"\n'],
    ["a template", "const a = `x ${b} .catch(() => 1) ${`${c}`}`\n"],
    ["a regex", "const a = /catch {}/.test(b)\n"],
    ["a comment", "// } catch {}\n"],
  ])("text inside %s is not code", (_, source) => {
    expect(swallows(source)).toEqual([])
  })

  test("a // inside a string does not explain the drop beside it", () => {
    expect(lines('const u = "http://x"\nawait rm(u).catch(() => undefined)\n')).toEqual(["2 .catch()"])
  })
})

describe("dropped errors", () => {
  test("every one in src/ and plugin/ says why", async () => {
    const missing: string[] = []
    let total = 0
    for (const dir of ["src", "plugin"])
      for await (const file of new Bun.Glob("**/*.ts").scan(`${ROOT}/${dir}`)) {
        const source = await Bun.file(`${ROOT}/${dir}/${file}`).text()
        total += swallows(source).length
        for (const swallow of unexplained(source)) missing.push(`${dir}/${file}:${swallow.line} ${swallow.form}`)
      }
    expect(missing).toEqual([])
    // The scan sees the code base: far fewer would mean the lexer lost its way.
    expect(total).toBeGreaterThan(150)
  })
})
