// @svc/client builds anywhere npm installs it: client/package.json pins what its build imports and runs
// (the build is test/e2e/release-client.test.ts's, which packs it as npm and `bun run release` do).
import { expect, test } from "bun:test";
import client from "../client/package.json";
import root from "../package.json";

const EXACT = /^\d+\.\d+\.\d+$/;

test("client/package.json pins its build's dependencies: TypeScript 5 (with a JS API), graphql, the repo's Bun", async () => {
  const build = await Bun.file(new URL("../client/scripts/build.ts", import.meta.url)).text();
  const imported = [...build.matchAll(/^import .* from "([^".][^"]*)";$/gm)]
    .map((m) => m[1]!)
    .filter((m) => !m.startsWith("node:"));
  expect(imported).toEqual(["typescript"]);
  const dev: Record<string, string> = client.devDependencies;
  expect(Object.keys(dev).sort()).toEqual(["bun", "graphql", "typescript"]);
  for (const version of Object.values(dev)) expect(version).toMatch(EXACT);
  // TypeScript 7 has no JS API (ts.createProgram): the build needs 5.
  expect(dev.typescript).toStartWith("5.");
  // The same versions as the repository's own, so that the workspace installs one of each.
  expect(dev.typescript).toBe(root.devDependencies.typescript);
  expect(dev.bun).toBe(root.devDependencies.bun);
  expect(dev.graphql).toBe(root.dependencies.graphql);
  // npm pack runs the build through the bun its install linked.
  expect(client.scripts.prepack).toBe("bun scripts/build.ts");
});
