// The documentation holds together: every relative link in README.md, CONTRIBUTING.md, SECURITY.md,
// client/README.md and docs/**/*.md names a file that exists, every #anchor a heading of the page it points into,
// every page under docs/ can be reached from the README, and the README stays a page a newcomer reads in one sitting.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";

const root = join(import.meta.dir, "..");
const README_MAX_LINES = 250;

const all = [
  "README.md",
  "CONTRIBUTING.md",
  "SECURITY.md",
  "client/README.md",
  ...[...new Glob("docs/**/*.md").scanSync(root)].sort(),
];
const texts = new Map(
  all.map((page) => [page, existsSync(join(root, page)) ? readFileSync(join(root, page), "utf8") : ""]),
);

/** The text without fenced code blocks (their lines left empty, so line numbers hold). */
function withoutCode(text: string): string {
  let fenced = false;
  return text
    .split("\n")
    .map((line) => {
      if (/^\s*```/.test(line)) {
        fenced = !fenced;
        return "";
      }
      return fenced ? "" : line;
    })
    .join("\n");
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, each space a hyphen. */
function slug(heading: string): string {
  return heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/[`*]/g, "")
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
    .replace(/ /g, "-");
}

/** Every anchor a page's headings give, with GitHub's -1, -2 … for repeats. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const m of withoutCode(text).matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const base = slug(m[1]!);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

type Link = { page: string; line: number; target: string };

/** Every markdown link and image outside code (inline code spans too) on a page. */
function links(page: string, text: string): Link[] {
  const found: Link[] = [];
  withoutCode(text)
    .split("\n")
    .forEach((raw, index) => {
      const line = raw.replace(/`[^`]*`/g, "``");
      for (const m of line.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
        found.push({ page, line: index + 1, target: m[1]! });
    });
  return found;
}

const external = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target);

describe("the documentation", () => {
  test("has a docs/ folder of pages, and the pages the README names", () => {
    expect(all.filter((p) => p.startsWith("docs/")).length).toBeGreaterThanOrEqual(10);
    for (const page of all) expect(existsSync(join(root, page))).toBe(true);
  });

  test(`README.md is at most ${README_MAX_LINES} lines`, () => {
    const lines = texts.get("README.md")!.replace(/\n$/, "").split("\n").length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  test("the slug of a heading is GitHub's", () => {
    expect(slug("Moving from SQLite to PostgreSQL: `svc copy`")).toBe("moving-from-sqlite-to-postgresql-svc-copy");
    expect(slug("Footprint: start-up, memory and size")).toBe("footprint-start-up-memory-and-size");
    expect(slug("Backup and restore (SQLite)")).toBe("backup-and-restore-sqlite");
    expect(slug("Safe retries: `Idempotency-Key`")).toBe("safe-retries-idempotency-key");
  });

  test("every relative link names an existing file, and every #anchor a heading of that page", () => {
    const broken: string[] = [];
    for (const [page, text] of texts) {
      for (const { line, target } of links(page, text)) {
        if (external(target)) continue;
        const [path, anchor] = target.split("#", 2) as [string, string | undefined];
        const file = path === "" ? page : normalize(join(dirname(page), decodeURIComponent(path)));
        const where = `${page}:${line} (${target})`;
        if (file.startsWith("..") || !existsSync(join(root, file))) {
          broken.push(`${where}: no file ${file}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!file.endsWith(".md")) {
          broken.push(`${where}: an anchor into a file that is not markdown`);
          continue;
        }
        const targetText = texts.get(file) ?? readFileSync(join(root, file), "utf8");
        if (!anchors(targetText).has(anchor)) broken.push(`${where}: no heading #${anchor} in ${file}`);
      }
    }
    expect(broken).toEqual([]);
  });

  test("every page of docs/, CONTRIBUTING.md, SECURITY.md and client/README.md can be reached from the README", () => {
    const reached = new Set(["README.md"]);
    const queue = ["README.md"];
    while (queue.length > 0) {
      const page = queue.shift()!;
      for (const { target } of links(page, texts.get(page)!)) {
        if (external(target)) continue;
        const path = target.split("#", 1)[0]!;
        if (!path.endsWith(".md")) continue;
        const file = relative(root, join(root, dirname(page), decodeURIComponent(path)));
        if (texts.has(file) && !reached.has(file)) {
          reached.add(file);
          queue.push(file);
        }
      }
    }
    expect(all.filter((page) => !reached.has(page))).toEqual([]);
  });
});

describe("the reverse proxy recipes (docs/operations.md)", () => {
  const operations = texts.get("docs/operations.md")!;
  const fenced = (language: string) => operations.match(new RegExp("```" + language + "\\n([\\s\\S]*?)```"))?.[1] ?? "";

  test("nginx passes the scheme and the host, which cookie sessions and the Origin check read", () => {
    const nginx = fenced("nginx");
    expect(nginx).toContain("proxy_set_header X-Forwarded-Proto $scheme;");
    expect(nginx).toContain("proxy_set_header Host $host;");
  });

  test("each recipe is followed by the SVC_TRUST_PROXY it needs", () => {
    const behind = operations.slice(operations.indexOf("### Behind a reverse proxy"));
    expect(behind.match(/SVC_TRUST_PROXY=1/g)?.length ?? 0).toBeGreaterThanOrEqual(2);
  });
});
