// The README is the reference: every SVC_ variable the code reads has a row in its configuration table.
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

test("every SVC_ variable read in src/ is documented in the README's configuration table", async () => {
  const read = new Set<string>();
  for await (const file of new Glob("src/**/*.ts").scan(root)) {
    const text = await Bun.file(join(root, file)).text();
    for (const match of text.matchAll(/\b(SVC_[A-Z0-9_]+)\b/g)) read.add(match[1]!);
  }
  expect(read.size).toBeGreaterThan(10);
  const readme = await Bun.file(join(root, "README.md")).text();
  const rows = new Set(
    [...readme.matchAll(/^\| `(SVC_[A-Z0-9_]+)`(?:, `(SVC_[A-Z0-9_]+)`)? \|/gm)]
      .flatMap((m) => [m[1], m[2]])
      .filter(Boolean),
  );
  expect([...read].filter((name) => !rows.has(name)).sort()).toEqual([]);
});
