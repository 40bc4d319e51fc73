// Loaded before every test file (bunfig.toml): the suite-wide hooks.
import { afterEach, beforeEach } from "bun:test"
import { testEnded, testStarts } from "./current-test"

beforeEach(testStarts)
afterEach(testEnded)
