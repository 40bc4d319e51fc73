// What a finished turn becomes: the result shaped from the transcript, the output schema checked,
// the verification run, the scope judged, and the record settled. Stands on turn.
// This file is the package's one door: the engine's other files import the package from here alone
// (test/architecture/floors.test.ts).
export { checkOutputSchema, outputFollowUp, withOutputSchema } from "./output-schema"
export { fromTranscript, renderText } from "./result"
export { type Forced, Settler } from "./settle"
export { fileChange, toStructured } from "./structured"
export { checkVerify, freezeInput } from "./verify"
