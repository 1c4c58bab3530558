// The source's shape, held so (#54 item 6): no hand-written module in src/ or client/src/ over 300 lines.
// A module that grows past it holds two things; split it by what each holds. Generated files are exempt.
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..");
const MAX_LINES = 300;

test(`no hand-written module in src/ or client/src/ is over ${MAX_LINES} lines`, () => {
  const long: string[] = [];
  for (const folder of ["src", "client/src"]) {
    for (const path of new Glob("**/*.{ts,tsx}").scanSync({ cwd: join(ROOT, folder) })) {
      if (path.includes(".generated.")) continue;
      const lines = readFileSync(join(ROOT, folder, path), "utf8").split("\n").length - 1;
      if (lines > MAX_LINES) long.push(`${folder}/${path}: ${lines}`);
    }
  }
  expect(long).toEqual([]);
});
