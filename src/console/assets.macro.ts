// Runs at bundle time (imported `with { type: "macro" }`): Bun's bundler builds the console from its
// HTML entry point (the page's script and stylesheet bundled, minified, named by content hash) and
// the files come back as data, so the binary carries the console and fetches nothing at run time.
// The bundler cannot be called from inside a bundle in progress, so it runs as `bun build`.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join } from "node:path";

export interface ConsoleFile {
  name: string;
  type: string;
  body: string;
}

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

export function consoleFiles(publicPath: string): ConsoleFile[] {
  const out = mkdtempSync(join(tmpdir(), "svc-console-"));
  try {
    const entry = join(import.meta.dir, "page", "index.html");
    const built = Bun.spawnSync(
      // svc-source: @svc/client (a workspace package) from its source, as the console's tsconfig reads it.
      [
        process.execPath,
        "build",
        entry,
        "--outdir",
        out,
        "--minify",
        "--public-path",
        `${publicPath}/`,
        "--conditions",
        "svc-source",
      ],
      { stderr: "pipe", stdout: "pipe" },
    );
    if (built.exitCode !== 0) throw new Error(`the console did not build: ${built.stderr.toString()}`);
    return readdirSync(out).map((name) => {
      const type = TYPES[extname(name)];
      if (!type) throw new Error(`the console's build wrote ${name}, of no type svc serves`);
      return { name, type, body: readFileSync(join(out, name), "utf8") };
    });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
