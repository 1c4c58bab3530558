// What the binary evaluates when: the code a request may never need sits in chunks reached only by
// import(), so it costs neither start-up nor memory until that request comes (docs/performance.md, "Footprint").
// Read from the bundle's own metafile, built with the binary's flags.
import { expect, test } from "bun:test";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

interface Output {
  entryPoint?: string;
  inputs: Record<string, unknown>;
  imports: { path: string; kind: string }[];
}

/** The sources evaluated with each entry's chunk: its own and those of every chunk it imports statically. */
async function loadedWith(): Promise<(entry: string) => string[]> {
  const built = await Bun.build({
    entrypoints: [join(root, "src", "main.ts")],
    target: "bun",
    format: "esm",
    splitting: true,
    minify: true,
    metafile: true,
    define: { BUILT_AS_BINARY: "true" },
  });
  expect(built.success).toBe(true);
  const outputs = built.metafile!.outputs as Record<string, Output>;
  return (entry) => {
    const start = Object.keys(outputs).find((name) => outputs[name]!.entryPoint === entry);
    expect(start).toBeDefined();
    const seen = new Set<string>();
    const visit = (name: string) => {
      if (seen.has(name)) return;
      seen.add(name);
      for (const next of outputs[name]!.imports) if (next.kind === "import-statement") visit(next.path);
    };
    visit(start!);
    return [...seen].flatMap((name) => Object.keys(outputs[name]!.inputs));
  };
}

/** A package's files among the sources (scoped names include their scope). */
const of = (sources: string[], pkg: string) => sources.filter((s) => s.includes(`node_modules/${pkg}/`));

const loaded = loadedWith();

test("the app loads without the code its first requests may never need", async () => {
  const sources = (await loaded)("src/app.ts");
  // The app itself is there, so the check can fail; GraphQL's engine is made with the app (mounted
  // through @elysiajs/graphql-yoga, which creates Yoga as it is mounted).
  expect(of(sources, "elysia").length).toBeGreaterThan(0);
  expect(of(sources, "graphql-yoga").length).toBeGreaterThan(0);
  for (const pkg of [
    // Loaded by the first scrape of /svc/metrics.
    "prom-client",
    // Pages and their files: by their first request.
    "@graphql-yoga/render-graphiql",
    "swagger-ui-dist",
    // The other database's client.
    "postgres",
  ]) {
    expect({ pkg, files: of(sources, pkg) }).toEqual({ pkg, files: [] });
  }
  for (const file of [
    "src/auth/common-password-list.ts",
    "src/db/postgres/store.ts",
    "src/console/files.ts",
    // The backups' own code: only where SVC_BACKUP_TO is set, which serve.ts imports then.
    "src/backup/service.ts",
  ]) {
    expect({ file, loaded: sources.includes(file) }).toEqual({ file, loaded: false });
  }
});
