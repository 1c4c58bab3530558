// docs/configuration.md is the reference: every SVC_ variable the code reads has a row in its table, and
// the README's short table of the settings that matter says nothing the full table does not.
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join } from "node:path";

const root = join(import.meta.dir, "..");

/**
 * The rows of a markdown table of variables: name → default, for rows written `| \`SVC_…\` | default |`. A
 * family of variables named by a part (`SVC_OIDC_<NAME>_ISSUER`) counts as its prefix (`SVC_OIDC_`), which is
 * what the code that builds their names reads.
 */
async function variableRows(file: string): Promise<Map<string, string>> {
  const text = await Bun.file(join(root, file)).text();
  const rows = new Map<string, string>();
  for (const m of text.matchAll(/^\| `(SVC_[A-Z0-9_]+)<[A-Z]+>[A-Z0-9_]*` \| ([^|]*) \|/gm)) rows.set(m[1]!, m[2]!);
  for (const m of text.matchAll(/^\| `(SVC_[A-Z0-9_]+)`(?:, `(SVC_[A-Z0-9_]+)`)? \| ([^|]*) \|/gm)) {
    rows.set(m[1]!, m[3]!);
    if (m[2]) rows.set(m[2], m[3]!);
  }
  return rows;
}

test("every SVC_ variable read in src/ is documented in docs/configuration.md's table", async () => {
  const read = new Set<string>();
  for await (const file of new Glob("src/**/*.ts").scan(root)) {
    const text = await Bun.file(join(root, file)).text();
    for (const match of text.matchAll(/\b(SVC_[A-Z0-9_]+)\b/g)) read.add(match[1]!);
  }
  expect(read.size).toBeGreaterThan(10);
  const rows = await variableRows("docs/configuration.md");
  expect([...read].filter((name) => !rows.has(name)).sort()).toEqual([]);
  // Nor a row for a variable nothing reads any more.
  expect([...rows.keys()].filter((name) => !read.has(name)).sort()).toEqual([]);
});

test("the README's settings are rows of the full table, with the same defaults", async () => {
  const full = await variableRows("docs/configuration.md");
  const readme = await variableRows("README.md");
  expect(readme.size).toBeGreaterThanOrEqual(10);
  expect(readme.size).toBeLessThanOrEqual(15);
  for (const [name, defaultValue] of readme)
    expect({ name, defaultValue }).toEqual({ name, defaultValue: full.get(name)! });
});
