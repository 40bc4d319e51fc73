// Bundles plugin/index.ts into one self-contained file (no imports left), which the binary embeds
// and the installer writes into OpenCode's plugin folder.
const result = await Bun.build({
  entrypoints: [`${import.meta.dir}/../plugin/index.ts`],
  target: "bun",
  format: "esm",
  minify: false,
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
const [output] = result.outputs
await Bun.write(`${import.meta.dir}/../dist/plugin.txt`, output!)
console.log("built dist/plugin.txt")
