// Files OpenCode opens in its config dirs at every start: its npm step reads package.json and
// package-lock.json in each (~/.config/opencode, and ~/.opencode). A FIFO, socket or device there
// (itself or what a link there points at) makes that start wait on it for good: `opencode models` and a
// workspace's first request to `serve` never answer. Install, doctor and serve each look first.
import { stat } from "node:fs/promises"

export interface BlockingPlace {
  path: string
  what: string
}

/** `~/.opencode`: where OpenCode's own installer puts its binary, read as a config dir too. */
export const opencodeDotDir = (home: string) => `${home}/.opencode`

/** The config dirs OpenCode reads: its XDG one and `~/.opencode` (whether or not it exists). */
export const opencodeConfigDirs = (configDir: string, home: string) => [configDir, opencodeDotDir(home)]

/** Each such place in `dirs` that is not a regular file, with what it is. */
export async function blockingPlaces(dirs: readonly string[]): Promise<BlockingPlace[]> {
  const found: BlockingPlace[] = []
  for (const dir of dirs)
    for (const name of ["package.json", "package-lock.json"]) {
      const path = `${dir}/${name}`
      // stat(2) follows a link without opening what it reaches, so a FIFO is seen and not waited on.
      const info = await stat(path).catch(() => undefined)
      if (!info || info.isFile() || info.isDirectory()) continue
      found.push({ path, what: info.isFIFO() ? "a FIFO" : info.isSocket() ? "a socket" : "a device" })
    }
  return found
}

/** What blockingPlaces found, said as a problem and its fix (install, doctor and serve say the same). */
export function blockingText(places: readonly BlockingPlace[]): { problem: string; fix: string } {
  return {
    problem:
      `${places.map(({ path, what }) => `${path} is ${what}`).join("; ")}: OpenCode reads it as a file at every ` +
      "start and would wait on it forever.",
    fix: `Remove it (${places.map(({ path }) => `rm '${path}'`).join("; ")})`,
  }
}
