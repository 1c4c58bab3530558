// The client's pages (docs/client/*.md and client/README.md) say what the client does: each stays short, each
// TypeScript snippet compiles against client/src as a reader would paste it, and errors.md lists every code of
// svc's catalog with its status and GraphQL code.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

const root = join(import.meta.dir, "..");
const pages = ["client/README.md", ...[...new Glob("docs/client/*.md").scanSync(root)].sort()];
const text = (page: string) => readFileSync(join(root, page), "utf8");

/** npm shows the package's README whole; a page per area is read in one go. */
const maxLines = (page: string) => (page === "client/README.md" ? 80 : 120);

/** A block right after this comment is left out: it needs files only the reader's app has (codegen's output). */
const NOT_COMPILED = "<!-- not compiled";

interface Snippet {
  page: string;
  /** The line of the page the code starts on. */
  line: number;
  code: string;
}

function snippets(page: string): Snippet[] {
  const found: Snippet[] = [];
  const lines = text(page).split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!/^```ts\s*$/.test(lines[i]!)) continue;
    const end = lines.indexOf("```", i + 1);
    if (!lines[i - 1]?.startsWith(NOT_COMPILED)) {
      found.push({ page, line: i + 2, code: lines.slice(i + 1, end).join("\n") });
    }
    i = end;
  }
  return found;
}

/**
 * One line put before a snippet: the pages show `client` made once, on the first page, and use it after. A
 * snippet that makes its own keeps it.
 */
function prelude(code: string): string {
  return /\bconst client\b/.test(code) ? "" : 'declare const client: import("@svc/client").Client;';
}

describe("the client's pages", () => {
  test("exist: the package's README and a page per area", () => {
    expect(pages).toEqual([
      "client/README.md",
      "docs/client/README.md",
      "docs/client/admin.md",
      "docs/client/auth.md",
      "docs/client/concurrency.md",
      "docs/client/errors.md",
      "docs/client/graphql.md",
      "docs/client/live-lists.md",
      "docs/client/oidc.md",
      "docs/client/paging.md",
      "docs/client/second-factors.md",
      "docs/client/sessions.md",
      "docs/client/subscriptions.md",
      "docs/client/users.md",
    ]);
  });

  test("are short: the package's README at most 80 lines, each page at most 120", () => {
    const long = pages
      .map((page) => ({ page, lines: text(page).replace(/\n$/, "").split("\n").length }))
      .filter(({ page, lines }) => lines > maxLines(page));
    expect(long).toEqual([]);
  });

  test("every TypeScript snippet compiles against client/src", () => {
    // The README's Quick start shows the client too.
    const all = [...pages, "README.md"].flatMap(snippets);
    expect(all.length).toBeGreaterThan(15);
    // Each snippet is a module of its own beside the page, so that it resolves packages as the repository does.
    const files = new Map(
      all.map((s, n) => [
        join(root, `${s.page}.snippet-${n}.ts`),
        { ...s, source: `${prelude(s.code)}\n${s.code}\nexport {};\n` },
      ]),
    );
    const options: ts.CompilerOptions = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ["lib.es2022.d.ts", "lib.dom.d.ts", "lib.dom.iterable.d.ts"],
      // A snippet for a command-line tool reads files and the environment.
      types: ["node"],
      strict: true,
      noUncheckedIndexedAccess: true,
      skipLibCheck: true,
      noEmit: true,
      paths: { "@svc/client": [join(root, "client/src/index.ts")] },
    };
    const host = ts.createCompilerHost(options);
    const { fileExists, readFile, getSourceFile } = host;
    host.fileExists = (name) => files.has(name) || fileExists.call(host, name);
    host.readFile = (name) => files.get(name)?.source ?? readFile.call(host, name);
    host.getSourceFile = (name, version, ...rest) => {
      const snippet = files.get(name);
      return snippet
        ? ts.createSourceFile(name, snippet.source, version)
        : getSourceFile.call(host, name, version, ...rest);
    };
    const program = ts.createProgram([...files.keys()], options, host);
    const problems: string[] = [];
    for (const [name, snippet] of files) {
      const file = program.getSourceFile(name)!;
      for (const d of [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)]) {
        const { line } = file.getLineAndCharacterOfPosition(d.start ?? 0);
        problems.push(
          `${snippet.page}:${snippet.line + line - 1}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`,
        );
      }
    }
    expect(problems).toEqual([]);
  });

  test("errors.md lists every code of src/errors/index.ts, with its status and GraphQL code", () => {
    const source = readFileSync(join(root, "src/errors/index.ts"), "utf8");
    const catalog = source.slice(source.indexOf("const CATALOG = {"), source.indexOf("} as const satisfies"));
    const codes = [...catalog.matchAll(/(\w+): \{\s*status: (\d+),\s*title: "[^"]*",\s*graphql: "(\w+)"/g)].map(
      (m) => `${m[1]} ${m[2]} ${m[3]}`,
    );
    expect(codes.length).toBeGreaterThan(25);
    const rows = [...text("docs/client/errors.md").matchAll(/^\| `([a-z_]+)` \| (\d+) \| `([A-Z_]+)` \|/gm)].map(
      (m) => `${m[1]} ${m[2]} ${m[3]}`,
    );
    expect(rows.sort()).toEqual(codes.sort());
  });
});
