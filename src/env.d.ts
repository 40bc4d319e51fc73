// Text assets embedded with `import x from "./x.md" with { type: "text" }`.
declare module "*.md" {
  const text: string
  export default text
}
declare module "*.txt" {
  const text: string
  export default text
}
