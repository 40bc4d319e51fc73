// One turn of a session: prompting OpenCode, following its events (progress, asks, spending, the cap),
// classifying a failure, and the next route on a retry. Stands on the store.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { classifyFailure } from "./failure"
export { Inbox, respondWaitMs, waitingOf } from "./inbox"
export { retryDelay, TRANSIENT_RETRIES } from "./retry"
export { nextRoute } from "./fallback"
export { runTurn, statusOf, type Turn } from "./turn"
