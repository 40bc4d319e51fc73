// How `serve` starts its watchdog. Waiting on the serve process is most of a watchdog's life, and the
// binary costs ~60 MB resident however little of it runs (the runtime and the whole embedded bundle), so
// the waiting is done by a POSIX shell (~1-2 MB) that then `exec`s `supervise` under the same PID, the
// PID serve leased for it: the lease holds from serve's first task until supervise leaves.

/**
 * The shell loop: while the parent lives (its /proc stat says anything but a zombie, as alive() reads
 * it), sleep; then become `supervise`. A `sleep` that fails (none on PATH) hands over at once rather
 * than spin: supervise then waits for the parent itself.
 */
const WAIT = [
  'parent=$2; shift 2; while read -r stat 2>/dev/null < "/proc/$parent/stat"; do',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  "state=${stat##*') '}; [ \"${state%% *}\" = Z ] && break; sleep 1 || break; done;",
  'exec "$@" supervise --parent "$parent"',
].join(" ")

/** The argv that waits for `parent` to be gone, then runs `self supervise --parent <parent>`. */
export function watchdogCommand(self: string[], parent: number): string[] {
  // `supervise --parent <pid>` as $0 $1 $2: whoever looks for the watchdog by its command line finds it.
  return ["/bin/sh", "-c", WAIT, "supervise", "--parent", String(parent), ...self]
}
