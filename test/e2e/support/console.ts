// What the console's browser tests share (test/e2e/console-browser*.test.ts): an svc with an administrator
// and two users, served to Chromium, and the pages they open, sign in on, check and photograph.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { folderDestination } from "../../../src/backup/folder.ts";
import { type Backups, createBackups } from "../../../src/backup/service.ts";
import type { SnapshotRequest, TakenSnapshot } from "../../../src/backup/snapshot.ts";
import { promote, testApp } from "../../helpers.ts";
import { servedToChromium } from "../chromium.ts";

/** SCREENSHOTS=1 writes the screenshots docs/administration.md shows, into docs/. */
export const SCREENSHOTS = process.env.SCREENSHOTS === "1" ? join(import.meta.dir, "..", "..", "..", "docs") : null;
const AXE = await Bun.file(join(import.meta.dir, "..", "..", "..", "node_modules", "axe-core", "axe.min.js")).text();
export const CODE = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){7}$/;
export const ROOT_PASSWORD = "correct horse battery";

/** An svc with backups to a folder, root (an administrator), ann, bob and one category, served to Chromium. */
export async function startConsole() {
  const svc = await testApp({ backups: folderBackups() });
  const root = await svc.signUp("root", ROOT_PASSWORD);
  await promote(svc.store, root.user.id);
  const ann = await svc.signUp("ann");
  const bob = await svc.signUp("bob");
  await svc.graphql(
    'mutation { createCategory(input: { name: "Old maps", colorHex: "#0F766E", icon: "map" }) { id } }',
    {
      token: ann.token,
    },
  );
  const { base, browser, close } = await servedToChromium(svc.app);
  return { svc, ann, bob, base, browser, close };
}

export type Console = Awaited<ReturnType<typeof startConsole>>;

/** `count` accounts named `prefix`00, `prefix`01…, straight into the store (their passwords unused). */
export async function accounts(svc: Console["svc"], prefix: string, count: number) {
  for (let i = 0; i < count; i++) {
    await svc.store.users.create({
      id: Bun.randomUUIDv7(),
      username: `${prefix}${String(i).padStart(2, "0")}`,
      email: `${prefix}${i}@example.com`,
      passwordHash: "unused",
      createdAt: new Date().toISOString(),
    });
  }
}

/**
 * A page that records every CSP violation; `outside()` lists the requests it made to another origin.
 * Those are read from the page's own resource timing, not from playwright's request events: listened
 * to, playwright can announce a request's end before the response it names (a health poll's, 1.2 s
 * apart in one run), and then throws inside its own connection ("Object with guid response@… was not
 * bound in the connection") in whatever test is running.
 */
export async function openConsole(
  { browser, base }: { browser: Browser; base: string },
  width = 1280,
): Promise<{ page: Page; outside: () => Promise<string[]>; refused: string[] }> {
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  // The default buffer keeps 250 entries; the status strip's polls would push early ones out.
  await context.addInitScript(() => performance.setResourceTimingBufferSize(100_000));
  const page = await context.newPage();
  const refused: string[] = [];
  page.on("console", (message) => {
    if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
  });
  await page.goto(`${base}/svc/admin`);
  const outside = async () =>
    (
      await page.evaluate(() => [location.href, ...performance.getEntriesByType("resource").map((entry) => entry.name)])
    ).filter((url) => !url.startsWith(base) && !url.startsWith("data:"));
  return { page, outside, refused };
}

/**
 * Leaves the console before closing: its health polling and fetches end first, so no answer arrives
 * for a page playwright has already let go of ("Object with guid response@… was not bound").
 */
export async function done(page: Page) {
  await page.goto("about:blank");
  await page.context().close();
}

export async function signIn(page: Page, username: string, password: string) {
  await page.getByLabel("Username or e-mail").fill(username);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in", exact: true }).click();
}

/** axe-core's serious and critical findings on the page as it stands. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // Through the DevTools protocol, which the page's CSP does not govern (an injected tag would be refused).
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    // any: axe is a global the evaluated source defines in the page, which these types do not know.
    const axe = (globalThis as any).axe;
    const result = await axe.run();
    return (result.violations as Array<{ id: string; impact: string; help: string; nodes: unknown[] }>)
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length})`);
  });
}

/** Whether the page keeps nothing in sessionStorage or localStorage. */
export function storageIsEmpty(page: Page): Promise<boolean> {
  return page.evaluate(() => {
    // any: the page's storage, which these (Bun's) types do not describe.
    const g = globalThis as any;
    return g.sessionStorage.length === 0 && g.localStorage.length === 0;
  });
}

export async function shoot(page: Page, name: string) {
  if (!SCREENSHOTS) return;
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`), fullPage: true });
}

/** Backups to a temp folder, taken only when asked, their snapshot a small stand-in (the view is what is tested). */
export function folderBackups(): Backups {
  const folder = mkdtempSync(join(tmpdir(), "svc-console-backups-"));
  mkdirSync(join(folder, "to"));
  process.once("exit", () => rmSync(folder, { recursive: true, force: true }));
  const quiet = { debug() {}, info() {}, warn() {}, error() {} };
  const snapshot = (request: SnapshotRequest) => {
    const path = join(request.scratch, request.name);
    writeFileSync(path, Bun.gzipSync(new TextEncoder().encode("a snapshot")));
    const counts = { users: 3, categories: 1, sessions: 3, auditEvents: 6 };
    const taken: TakenSnapshot = { name: request.name, path, size: Bun.file(path).size, counts };
    return { done: Promise.resolve(taken), stop() {} };
  };
  return createBackups({
    databasePath: join(folder, "svc.db"),
    destination: folderDestination(join(folder, "to")),
    everySeconds: null,
    keep: 14,
    s3: {},
    version: "0.2.0",
    logger: quiet,
    snapshot,
  });
}

/** The categories the page lists, in its order. */
export function listed(page: Page): Promise<string[]> {
  // any: the page's elements, which these (Bun's) types do not describe.
  return page.locator("li[data-category]").evaluateAll((items) => items.map((item: any) => item.dataset.category));
}
