// How the one binary is compiled: by `bun run build`, `bun run release` and the binary tests alike.
// ESM with code splitting: each module a command or a request loads later (`import()`) is its own
// chunk inside the binary, read and evaluated only when first imported. Bytecode: the chunks are
// compiled ahead, so what is loaded starts without parsing. The source map keeps stack traces in
// logs pointing at src/ (part of the file read only when a trace is printed). docs/performance.md, "Footprint".
export const COMPILE_FLAGS = [
  "--compile",
  "--minify",
  "--sourcemap",
  "--bytecode",
  "--format=esm",
  "--splitting",
] as const;
