// The @svc/client tarball: as `bun run release` packs it beside the binaries (src/build/client-package.ts),
// and as `npm pack` makes it in a copy of client/ with nothing but what npm installs from package.json.
import { afterAll, expect, test } from "bun:test";
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import client from "../../client/package.json";
import { packClient } from "../../src/build/client-package.ts";
import { runProcess } from "../support/cli.ts";

const CLIENT = join(import.meta.dir, "../../client");
const dir = mkdtempSync(join(tmpdir(), "svc-client-pack-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files of a tarball, sorted. */
async function filesOf(tarball: string): Promise<string[]> {
  const listed = await runProcess(["tar", "tzf", tarball]);
  expect(listed.code).toBe(0);
  return listed.stdout.trim().split("\n").sort();
}

function expectPackage(files: string[]): void {
  for (const file of [
    "package/package.json",
    "package/README.md",
    "package/dist/index.js",
    "package/dist/index.d.ts",
  ]) {
    expect(files).toContain(file);
  }
  expect(
    files.filter(
      (file) =>
        !file.startsWith("package/dist/") && !file.startsWith("package/README") && file !== "package/package.json",
    ),
  ).toEqual([]);
}

test("the release's client tarball: svc-client-<version>.tgz with dist/ and the README, no sources", async () => {
  const out = join(dir, "release");
  const name = packClient(out);
  expect(name).toBe(`svc-client-${client.version}.tgz`);
  expect(readdirSync(out)).toEqual([name]);
  expectPackage(await filesOf(join(out, name)));
}, 120_000);

test.skipIf(Bun.which("npm") === null)(
  "npm install and npm pack in a copy of client/: the pinned build dependencies suffice",
  async () => {
    const copy = join(dir, "copy");
    cpSync(CLIENT, copy, {
      recursive: true,
      filter: (source) => !/\/(node_modules|dist)(\/|$)/.test(source.slice(CLIENT.length)),
    });
    const installed = await runProcess(["npm", "install", "--no-audit", "--no-fund"], {
      cwd: copy,
      timeoutMs: 170_000,
    });
    expect(installed.code).toBe(0);
    const packed = await runProcess(["npm", "pack"], { cwd: copy, timeoutMs: 170_000 });
    expect(packed.stderr).not.toContain("npm error");
    expect(packed.code).toBe(0);
    expectPackage(await filesOf(join(copy, packed.stdout.trim().split("\n").at(-1)!)));
  },
  180_000,
);
