// The compiled binary every end-to-end file drives, built once per test worker (`bun run test:e2e` runs the
// files on two workers, each keeping its modules, this one included, across its files) with `bun run build`'s
// own script and flags: a build costs some 20 s of the 2 cores.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..", "..");

let building: Promise<string> | undefined;

/** The path of the binary, built on the first call; files that need it elsewhere copy it. Never write to it. */
export function compiledBinary(): Promise<string> {
  building ??= build();
  return building;
}

async function build(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "svc-e2e-binary-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const binary = join(dir, "svc");
  const proc = Bun.spawn([process.execPath, "src/build/compile.ts", binary], {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  const [code, out, err] = await Promise.all([
    proc.exited,
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
  ]);
  if (code !== 0) throw new Error(`the build failed (${code}):\n${out}${err}`);
  return binary;
}
