// The patch_apply write step's entry when running from source (the compiled binary enters it through
// main.ts): started inside bwrap by workspace/apply/apply.ts, request on stdin, answer on stdout.
import { stepMain } from "../workspace/write-step"

await stepMain()
