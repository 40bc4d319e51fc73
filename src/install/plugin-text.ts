// The bundled plugin, embedded as text so the installer writes exactly what was built
// (one embedding, in src/templates/plugin.ts).
export { pluginSource as PLUGIN_TEXT } from "../templates/plugin"
