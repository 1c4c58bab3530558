// `bun run build` in client/ (and `npm pack`'s prepack): dist/index.js, one ES module for browsers, Bun and
// Node, and dist/*.d.ts beside it from the TypeScript compiler.
import { rmSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const root = join(import.meta.dir, "..");
const dist = join(root, "dist");
rmSync(dist, { recursive: true, force: true });

const built = await Bun.build({
  entrypoints: [join(root, "src/index.ts")],
  outdir: dist,
  target: "browser",
  format: "esm",
  // The optional printer for parsed documents: the app's own graphql, when it has one.
  external: ["graphql"],
  sourcemap: "linked",
});
if (!built.success) {
  for (const message of built.logs) console.error(message);
  process.exit(1);
}

const config = ts.getParsedCommandLineOfConfigFile(
  join(root, "tsconfig.json"),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n"));
    },
  },
);
if (!config) throw new Error("client/tsconfig.json could not be read");
const program = ts.createProgram(config.fileNames, config.options);
const emitted = program.emit();
const problems = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics];
if (problems.length > 0) {
  console.error(
    ts.formatDiagnosticsWithColorAndContext(problems, {
      ...ts.sys,
      getCanonicalFileName: (f) => f,
      getNewLine: () => "\n",
    }),
  );
  process.exit(1);
}
console.log(`built ${dist}: ${built.outputs.map((output) => output.path.slice(dist.length + 1)).join(", ")} and types`);
