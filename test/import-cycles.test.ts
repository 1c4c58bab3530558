// No module of svc or its client imports itself round a cycle: a module that does runs before the module it
// imports has finished loading, and reads whatever that one has not yet defined. Type-only imports vanish
// when the code runs, but a cycle through them still means two files that each need the other to be read.
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { dirname, join, relative, resolve } from "node:path";

const root = join(import.meta.dir, "..");
const FOLDERS = ["src", "client/src"];

type Graph = Map<string, string[]>;

const ts = new Bun.Transpiler({ loader: "ts" });
const tsx = new Bun.Transpiler({ loader: "tsx" });
/** `import … from "x"`, `import type … from "x"`, `export … from "x"`: what the transpiler drops included. */
const STATIC_IMPORT = /^(?:import|export)\s[^;]*?\bfrom\s+"([^"]+)"/gms;

/** Each file's relative imports, as paths from the repository's root; `types`: type-only imports too. */
async function importGraph(types: boolean): Promise<Graph> {
  const graph: Graph = new Map();
  for (const folder of FOLDERS) {
    for (const name of new Glob("**/*.{ts,tsx}").scanSync({ cwd: join(root, folder) })) {
      const file = join(root, folder, name);
      const text = await Bun.file(file).text();
      // The transpiler's list: static and dynamic imports of values, as the code runs them.
      const paths = (file.endsWith(".tsx") ? tsx : ts).scanImports(text).map((i) => i.path);
      if (types) for (const match of text.matchAll(STATIC_IMPORT)) paths.push(match[1]!);
      const local = paths
        .filter((path) => path.startsWith("."))
        // The client imports its own modules as .js, the name they have once built.
        .map((path) => relative(root, resolve(dirname(file), path.replace(/\.js$/, ".ts"))));
      graph.set(relative(root, file), [...new Set(local)]);
    }
  }
  return graph;
}

/** The strongly connected groups of more than one file (Tarjan): each is one or more cycles. */
function cycles(graph: Graph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const visit = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || (graph.get(file) ?? []).includes(file)) groups.push(group.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return groups;
}

test("the cycle finder finds a cycle, and the import scan sees imports of values and of types", async () => {
  const graph: Graph = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a"]],
    ["d", ["a"]],
  ]);
  expect(cycles(graph)).toEqual([["a", "b", "c"]]);
  const values = await importGraph(false);
  const all = await importGraph(true);
  expect(values.get("src/main.ts")).toContain("src/process/cli.ts");
  // cli.ts imports backup/cli.ts when the command runs (import()); backup's service needs only the type
  // of its destination.
  expect(values.get("src/process/cli.ts")).toContain("src/backup/cli.ts");
  expect(values.get("src/backup/service.ts")).not.toContain("src/backup/destination.ts");
  expect(all.get("src/backup/service.ts")).toContain("src/backup/destination.ts");
  expect(values.get("client/src/client.ts")).toContain("client/src/auth.ts");
});

test("no module imports itself round a cycle of imports of values", async () => {
  expect(cycles(await importGraph(false))).toEqual([]);
});

test("nor round a cycle of imports of types", async () => {
  expect(cycles(await importGraph(true))).toEqual([]);
});
