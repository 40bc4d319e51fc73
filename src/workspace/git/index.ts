// Git as the product runs it: confined to a sandbox on the user's repository (git.ts), and the private repository an
// isolated worker's worktree is measured and collected with (private-git.ts).
// This file is the package's one door: src's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { findRepository, locateRepository, type Repository, sandboxedGit } from "./git"
export { layoutOf, privateGit, type WorktreeLayout } from "./private-git"
