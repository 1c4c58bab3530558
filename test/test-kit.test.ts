// The tests' own shape, held so (#54 item 7): no test file over 500 lines (split by topic, shared setup in
// test/support/ and test/e2e/support/), svc run as a process only through the test kit's spawner
// (test/support/cli.ts), whose timeout kills a child that hangs instead of leaving a suite waiting, and no
// promise handed to expect() still pending.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const TEST = import.meta.dir;
const MAX_LINES = 500;

/** Every TypeScript file under test/ but the kit's own, as [path from test/, text]. */
function testSources(): Array<[string, string]> {
  return (
    [...new Glob("**/*.ts").scanSync({ cwd: TEST })]
      // The kit's own files, and this one, which names the forms it looks for.
      .filter(
        (path) => !/^(e2e\/)?support\//.test(path) && path !== "test-kit.test.ts" && !path.includes("node_modules"),
      )
      .sort()
      .map((path) => [path, readFileSync(join(TEST, path), "utf8")])
  );
}

/**
 * The spawns in `text` whose program is svc: `bun src/main.ts` (by any name of main.ts) or a compiled binary
 * (named `binary`, or a copy, `join(dir, "svc")`), read from the command's first elements.
 */
function svcSpawns(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/Bun\.spawn(?:Sync)?\(\s*\[/g)) {
    const [first = "", second = ""] = elements(text, match.index + match[0].length, 2);
    const program = /^(?:"bun"|process\.execPath)$/.test(first) ? second : first;
    if (/main\.ts|\bMAIN\b|^main$|binary|"svc"\)$/.test(program)) found.push(`${match[0]}${first}, ${second}`);
  }
  return found;
}

/** The first `count` elements of the array literal whose text starts at `from`, each trimmed. */
function elements(text: string, from: number, count: number): string[] {
  const found: string[] = [];
  let depth = 0;
  let quote = "";
  let start = from;
  for (let i = from; i < text.length && found.length < count; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === "\\") i++;
      else if (c === quote) quote = "";
    } else if (c === '"' || c === "'" || c === "`") quote = c;
    else if ("([{".includes(c)) depth++;
    else if (")}".includes(c) || (c === "]" && depth > 0)) depth--;
    else if (depth === 0 && (c === "," || c === "]")) {
      found.push(text.slice(start, i).trim());
      start = i + 1;
      if (c === "]") break;
    }
  }
  return found;
}

describe("the test kit", () => {
  test(`no test file is over ${MAX_LINES} lines`, () => {
    const long = [...new Glob("**/*.test.ts").scanSync({ cwd: TEST })]
      .filter((path) => !path.includes("node_modules"))
      .map((path) => ({ path, lines: readFileSync(join(TEST, path), "utf8").split("\n").length - 1 }))
      .filter(({ lines }) => lines > MAX_LINES);
    expect(long).toEqual([]);
  });

  test("no test spawns svc (src/main.ts or the compiled binary) but through test/support/cli.ts", () => {
    const offenders = testSources().flatMap(([path, text]) => svcSpawns(text).map((spawn) => `${path}: ${spawn}`));
    expect(offenders).toEqual([]);
  });

  test("no test hands expect() a promise (.resolves, .rejects): it awaits it first, or asks failure() for its error", () => {
    // Given one still pending, bun test spins its event loop in place (test/support/failure.ts says what that cost).
    const offenders = testSources().flatMap(([path, text]) =>
      text
        .split("\n")
        .flatMap((line, i) => (/\.(resolves|rejects)\b/.test(line) ? [`${path}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(offenders).toEqual([]);
  });

  test("the check sees each form a test has spawned svc by", () => {
    for (const spawn of [
      'Bun.spawn(["bun", MAIN, "admin"], {',
      'Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "src", "main.ts")], {',
      'Bun.spawnSync([process.execPath, main, "migrate"], { env })',
      "Bun.spawn([binary], { cwd: dir })",
      "Bun.spawn([built.binary, ...args], {",
      'Bun.spawnSync([join(dir, "svc"), "healthcheck"], {',
    ])
      expect({ spawn, found: svcSpawns(spawn).length }).toEqual({ spawn, found: 1 });
    for (const other of ['Bun.spawnSync(["openssl", ...args], { cwd })', 'Bun.spawn(["node", "-e", script], {'])
      expect(svcSpawns(other)).toEqual([]);
  });
});
