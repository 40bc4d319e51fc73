// An object that is built the first time anything reads it: `serve` hands its tools a Delegations this
// way, so a server that only answered `initialize` and `tools/list` never read a task record, started
// recovery or retention, or reached OpenCode.

/** `build()`'s object, built once on the first property read (methods stay bound to it). */
export function onFirstUse<T extends object>(build: () => T): T {
  let built: T | undefined
  const target = () => {
    built ??= build()
    return built
  }
  return new Proxy({} as T, {
    get(_, key) {
      const value: unknown = Reflect.get(target(), key)
      return typeof value === "function" ? value.bind(target()) : value
    },
    has: (_, key) => Reflect.has(target(), key),
    set: (_, key, value) => Reflect.set(target(), key, value),
  })
}
