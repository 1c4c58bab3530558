// node:fs for the modules `svc serve` evaluates before it listens. Importing it statically loads it
// with them: Bun builds the module's hundred-odd functions and names each, enough calls to start the
// JIT (more RSS even for a bare server that imports it), which a start on an existing database never
// needs. Taken here on first use instead (docs/performance.md, "Footprint").
import type * as NodeFs from "node:fs";

let loaded: typeof NodeFs | undefined;

export function nodeFs(): typeof NodeFs {
  return (loaded ??= process.getBuiltinModule("node:fs"));
}
