// The bundled OpenCode plugin (scripts/build-plugin.ts writes dist/plugin.txt, a .txt so TypeScript takes it as text,
// before anything that
// imports this runs), embedded as text so the binary can write it into OpenCode's plugin folder.
import source from "../../dist/plugin.txt" with { type: "text" }

export const pluginSource: string = source
