// The admin console in a real browser: Debian's Chromium driven by playwright-core, against a listening
// svc. An operator's day: sign in, find and disable a user, issue a reset code, change categories,
// read the audit log; categories others change, shown as they change; with axe-core's accessibility
// check on every view, and not one request to any other origin. Its session, in svc's refresh cookie:
// across a reload and a duplicated tab, renewed by each tab in turn, ended by signing out; the categories
// view following changes across its tokens' renewals. Without Chromium the test is skipped, except with CI=true
// (.ci/run installs it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { folderDestination } from "../../src/backup/folder.ts";
import { type Backups, createBackups } from "../../src/backup/service.ts";
import type { SnapshotRequest, TakenSnapshot } from "../../src/backup/snapshot.ts";
import { chromiumAvailable, servedToChromium } from "./chromium.ts";
import { expectProblem, testApp, testConfig, promote } from "../helpers.ts";

/** SCREENSHOTS=1 writes the screenshots docs/administration.md shows, into docs/. */
const SCREENSHOTS = process.env.SCREENSHOTS === "1" ? join(import.meta.dir, "..", "..", "docs") : null;
const AXE = await Bun.file(join(import.meta.dir, "..", "..", "node_modules", "axe-core", "axe.min.js")).text();
const CODE = /^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){7}$/;

describe.skipIf(!chromiumAvailable)("the console in Chromium", () => {
  let browser: Browser;
  let base: string;
  let close: () => Promise<void>;
  let svc: Awaited<ReturnType<typeof testApp>>;
  let ann: Awaited<ReturnType<typeof svc.signUp>>;
  let bob: Awaited<ReturnType<typeof svc.signUp>>;
  const ROOT_PASSWORD = "correct horse battery";

  beforeAll(async () => {
    svc = await testApp({ backups: folderBackups() });
    const root = await svc.signUp("root", ROOT_PASSWORD);
    await promote(svc.store, root.user.id);
    ann = await svc.signUp("ann");
    bob = await svc.signUp("bob");
    await svc.graphql(
      'mutation { createCategory(input: { name: "Old maps", colorHex: "#0F766E", icon: "map" }) { id } }',
      {
        token: ann.token,
      },
    );
    ({ base, browser, close } = await servedToChromium(svc.app));
  }, 30_000);
  /** Folders the tests made, removed at the end. */
  const made: string[] = [];
  afterAll(async () => {
    await close?.();
    for (const folder of made) rmSync(folder, { recursive: true, force: true });
  });

  /**
   * A page that records every CSP violation; `outside()` lists the requests it made to another origin.
   * Those are read from the page's own resource timing, not from playwright's request events: listened
   * to, playwright can announce a request's end before the response it names (a health poll's, 1.2 s
   * apart in one run), and then throws inside its own connection ("Object with guid response@… was not
   * bound in the connection") in whatever test is running.
   */
  async function open(width = 1280): Promise<{ page: Page; outside: () => Promise<string[]>; refused: string[] }> {
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
        await page.evaluate(() => [
          location.href,
          ...performance.getEntriesByType("resource").map((entry) => entry.name),
        ])
      ).filter((url) => !url.startsWith(base) && !url.startsWith("data:"));
    return { page, outside, refused };
  }

  /**
   * Leaves the console before closing: its health polling and fetches end first, so no answer arrives
   * for a page playwright has already let go of ("Object with guid response@… was not bound").
   */
  async function done(page: Page) {
    await page.goto("about:blank");
    await page.context().close();
  }

  async function signIn(page: Page, username: string, password: string) {
    await page.getByLabel("Username or e-mail").fill(username);
    await page.getByLabel("Password").fill(password);
    await page.getByRole("button", { name: "Sign in" }).click();
  }

  /** axe-core's serious and critical findings on the page as it stands. */
  async function accessibilityProblems(page: Page): Promise<string[]> {
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
  function storageIsEmpty(page: Page): Promise<boolean> {
    return page.evaluate(() => {
      // any: the page's storage, which these (Bun's) types do not describe.
      const g = globalThis as any;
      return g.sessionStorage.length === 0 && g.localStorage.length === 0;
    });
  }

  async function shoot(page: Page, name: string) {
    if (!SCREENSHOTS) return;
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOTS, `console-${name}.png`), fullPage: true });
  }

  test("a user who is not an administrator is told so, and gets no further", async () => {
    const { page } = await open();
    await signIn(page, "ann", ann.password);
    await expect(page.getByRole("alert").textContent()).resolves.toContain("Not an administrator");
    expect(await page.getByRole("navigation", { name: "Console" }).count()).toBe(0);
    // Its session was ended at once: ann has only the one from her sign-up.
    const sessions = await svc.call("GET", "/svc-api/v1/auth/sessions", { token: ann.token });
    expect(sessions.body).toHaveLength(1);
    await expect(accessibilityProblems(page)).resolves.toEqual([]);
    await shoot(page, "sign-in");
    await done(page);
  }, 30_000);

  test("an operator's round: disable a user, issue a reset code, change categories, read it all in the audit log", async () => {
    const { page, outside, refused } = await open();
    // By keyboard alone: Tab to each field, Enter to submit.
    await page.getByLabel("Username or e-mail").waitFor();
    await page.keyboard.press("Tab");
    // The focused field shows it.
    const ring = await page.evaluate(() => {
      // any: the page's DOM, which these (Bun's) types do not describe.
      const g = globalThis as any;
      return g.getComputedStyle(g.document.activeElement).outlineStyle as string;
    });
    expect(ring).toBe("solid");
    await page.keyboard.type("root");
    await page.keyboard.press("Tab");
    await page.keyboard.type(ROOT_PASSWORD);
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Users" }).waitFor();
    const status = page.getByRole("region", { name: "Service status" });
    await expect(status.textContent()).resolves.toMatch(/health ok.*version \S+.*environment test.*database sqlite/);
    await expect(accessibilityProblems(page)).resolves.toEqual([]);
    await shoot(page, "users");

    // Find ann, disable her: her token stops working at once.
    await page.getByLabel("Search (start of username or e-mail)").fill("AN");
    await page.getByRole("button", { name: "Find" }).click();
    const annRow = page.locator('tr[data-user="ann"]');
    await annRow.waitFor();
    expect(await page.locator("tbody tr").count()).toBe(1);
    await annRow.getByRole("button", { name: "Disable" }).click();
    await page.getByRole("status").filter({ hasText: "ann disabled" }).waitFor();
    // The notice comes before the list is read again: wait for the row to show it (it failed once under load).
    await annRow.locator(".badge", { hasText: "disabled" }).waitFor();
    await expect(annRow.locator(".badge").textContent()).resolves.toBe("disabled");
    expectProblem(await svc.call("GET", "/svc-api/v1/users/me", { token: ann.token }), 401, "unauthorized");

    // A reset code for bob, shown once with a copy button; bob redeems it.
    await page.getByLabel("Search (start of username or e-mail)").fill("");
    await page.getByRole("button", { name: "Find" }).click();
    await page.locator('tr[data-user="bob"]').getByRole("button", { name: "Reset code" }).click();
    const shown = page.getByRole("region", { name: "Reset code" });
    const code = (await shown.locator("code").textContent())!;
    expect(code).toMatch(CODE);
    expect(await shown.getByRole("button", { name: "Copy code" }).count()).toBe(1);
    await shoot(page, "reset-code");
    const redeemed = await svc.call("POST", "/svc-api/v1/auth/password-reset", {
      body: { username: "bob", reset_code: code, new_password: "bob's new secret" },
    });
    expect(redeemed.status).toBe(200);

    // Delete asks first; cancelling deletes nothing.
    const bobRow = page.locator('tr[data-user="bob"]');
    await bobRow.getByRole("button", { name: "Delete" }).click();
    await bobRow.getByRole("button", { name: "Cancel" }).click();
    expect((await svc.call("GET", "/svc-api/v1/users/me", { token: redeemed.body.token })).status).toBe(200);

    // The API's refusal, as its title and detail: root is the last administrator.
    await page.locator('tr[data-user="root"]').getByRole("button", { name: "Demote" }).click();
    const refusal = (await page.getByRole("alert").textContent())!;
    expect(refusal).toStartWith("Last administrator: This is the last active administrator");
    expect(refusal).not.toContain("{");

    // Categories: create, edit, delete.
    await page.getByRole("link", { name: "Categories" }).click();
    await page.getByRole("heading", { name: "Categories" }).waitFor();
    await page.locator('li[data-category="Old maps"]').waitFor();
    const create = page.getByRole("form", { name: "Create category" });
    await create.getByLabel("Name", { exact: true }).fill("Console books");
    await create.getByLabel("Icon", { exact: true }).fill("book");
    await create.getByRole("button", { name: "Create category" }).click();
    const books = page.locator('li[data-category="Console books"]');
    await books.waitFor();
    await expect(accessibilityProblems(page)).resolves.toEqual([]);
    await shoot(page, "categories");
    await books.getByRole("button", { name: "Edit Console books" }).click();
    const edit = page.getByRole("form", { name: "Save Console books" });
    await edit.getByLabel("Description").fill("Paper, mostly");
    await edit.getByRole("button", { name: "Save Console books" }).click();
    await books.getByText("Paper, mostly").waitFor();
    // An administrator may delete anyone's category: ann's old maps go.
    const maps = page.locator('li[data-category="Old maps"]');
    await maps.getByRole("button", { name: "Delete" }).click();
    await maps.getByRole("button", { name: "Yes, delete" }).click();
    await maps.waitFor({ state: "detached" });
    const left = await svc.graphql("{ categories { name description } }", { token: redeemed.body.token });
    expect(left.body.data.categories).toEqual([{ name: "Console books", description: "Paper, mostly" }]);

    // The audit log shows what was done, by whom.
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log" }).waitFor();
    for (const action of ["admin.user.updated", "password_reset.issued", "password_reset.redeemed", "category.deleted"])
      await page.locator(`tr[data-action="${action}"]`).first().waitFor();
    await expect(accessibilityProblems(page)).resolves.toEqual([]);
    await shoot(page, "audit");
    await page.getByLabel("Action").selectOption("category.deleted");
    await page.getByRole("button", { name: "Show" }).click();
    await page.waitForFunction(() => {
      // any: the page's DOM, which these (Bun's) types do not describe.
      const rows = [...(globalThis as any).document.querySelectorAll("tbody tr")];
      return rows.length === 1 && rows[0].dataset.action === "category.deleted";
    });
    expect(await page.locator("tbody tr td").nth(2).textContent()).toBe("root");
    await page.getByLabel("Action").selectOption("");
    await page.getByLabel("User (username, e-mail or id)").fill("ann");
    await page.getByRole("button", { name: "Show" }).click();
    await page.locator('tr[data-action="admin.user.updated"]').waitFor();
    for (const action of await page.locator("tbody tr").evaluateAll((rows) => rows.map((r: any) => r.dataset.action)))
      expect([
        "admin.user.updated",
        "user.created",
        "login.succeeded",
        "session.revoked",
        "category.deleted",
      ]).toContain(action);

    expect(await outside()).toEqual([]);
    expect(refused).toEqual([]);
    expect(await storageIsEmpty(page)).toBe(true);
    await done(page);
  }, 60_000);

  test("names an account past the first thousand, in the audit log and as a category's creator; a deleted one by its id", async () => {
    const big = await testApp();
    const admin = await big.signUp("boss", ROOT_PASSWORD);
    await promote(big.store, admin.user.id);
    for (let i = 0; i < 1000; i++) {
      await big.store.users.create({
        id: Bun.randomUUIDv7(),
        username: `filler${i}`,
        email: `filler${i}@example.com`,
        passwordHash: "x".repeat(90),
        createdAt: new Date().toISOString(),
      });
    }
    // The 1,002nd and 1,003rd accounts: past the page of a thousand the console reads first.
    const zoe = await big.signUp("zoe");
    const yan = await big.signUp("yan");
    await big.graphql('mutation { createCategory(input: { name: "Zoe\'s" }) { id } }', { token: zoe.token });
    await big.graphql('mutation { createCategory(input: { name: "Yan\'s" }) { id } }', { token: yan.token });
    expect((await big.call("DELETE", "/svc-api/v1/users/", { token: yan.token })).status).toBe(204);
    const server = big.app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`http://127.0.0.1:${server.port}/svc/admin#/categories`);
      await signIn(page, "boss", ROOT_PASSWORD);
      const zoes = page.locator(`li[data-category="Zoe's"]`);
      await zoes.getByText("by zoe").waitFor();
      // Yan's account is gone: the category keeps no creator.
      await expect(page.locator(`li[data-category="Yan's"]`).textContent()).resolves.toContain("no creator");

      await page.getByRole("link", { name: "Audit log" }).click();
      await page.getByLabel("User (username, e-mail or id)").fill(yan.user.id);
      await page.getByRole("button", { name: "Show" }).click();
      // yan's own deletion: by yan, on yan, who is known only by id now.
      const gone = page.locator('tr[data-action="user.deleted"]');
      await gone.waitFor();
      await expect(gone.locator('td[data-label="By"]').textContent()).resolves.toBe(yan.user.id);
      await page.getByLabel("User (username, e-mail or id)").fill("zoe");
      await page.getByRole("button", { name: "Show" }).click();
      const created = page.locator('tr[data-action="user.created"]');
      await created.locator('td[data-label="By"]').getByText("zoe", { exact: true }).waitFor();
    } finally {
      await page.goto("about:blank");
      await context.close();
      void server.stop();
    }
  }, 60_000);

  test("pages through accounts twenty at a time, and deletes one once confirmed", async () => {
    for (let i = 0; i < 22; i++) {
      await svc.store.users.create({
        id: Bun.randomUUIDv7(),
        username: `page-${String(i).padStart(2, "0")}`,
        email: `page-${i}@example.com`,
        passwordHash: "unused",
        createdAt: new Date().toISOString(),
      });
    }
    const { page } = await open();
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByLabel("Search (start of username or e-mail)").fill("page-");
    await page.getByRole("button", { name: "Find" }).click();
    await page.locator('tr[data-user="page-00"]').waitFor();
    expect(await page.locator("tbody tr").count()).toBe(20);
    await page.getByRole("button", { name: "Next page" }).click();
    await page.locator('tr[data-user="page-21"]').waitFor();
    expect(await page.locator("tbody tr").count()).toBe(2);
    expect(await page.getByRole("button", { name: "Next page" }).isDisabled()).toBe(true);
    await page.getByRole("button", { name: "Previous page" }).click();
    await page.locator('tr[data-user="page-00"]').waitFor();
    const row = page.locator('tr[data-user="page-00"]');
    await row.getByRole("button", { name: "Delete" }).click();
    await row.getByRole("button", { name: "Yes, delete" }).click();
    await row.waitFor({ state: "detached" });
    expect(await svc.store.users.findByLogin("page-00")).toBeNull();
    await done(page);
  }, 30_000);

  test("an edit from a list another administrator changed since is refused with Conflict, not written over", async () => {
    // ann was disabled in the operator's round: another author.
    const cleo = await svc.signUp("cleo");
    const made = await svc.graphql('mutation { createCategory(input: { name: "Shared atlas" }) { id } }', {
      token: cleo.token,
    });
    const id = made.body.data.createCategory.id;
    const { page } = await open();
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByRole("link", { name: "Categories" }).click();
    const atlas = page.locator('li[data-category="Shared atlas"]');
    await atlas.waitFor();
    await atlas.getByRole("button", { name: "Edit Shared atlas" }).click();
    // Meanwhile its creator changes it.
    await svc.graphql(`mutation { updateCategory(id: "${id}", input: { description: "ann's" }) { id } }`, {
      token: cleo.token,
    });
    const edit = page.getByRole("form", { name: "Save Shared atlas" });
    await edit.getByLabel("Description").fill("root's");
    await edit.getByRole("button", { name: "Save Shared atlas" }).click();
    await expect(page.getByRole("alert").textContent()).resolves.toStartWith(
      "Conflict: The category changed since you read it: it is at version 2.",
    );
    const kept = await svc.graphql(`{ category(id: "${id}") { description version } }`, { token: cleo.token });
    expect(kept.body.data.category).toEqual({ description: "ann's", version: 2 });
    // The list was read again: saving now is a decision made knowing the other change, and it goes through.
    await edit.getByRole("button", { name: "Save Shared atlas" }).click();
    await atlas.getByText("root's").waitFor();
    const saved = await svc.graphql(`{ category(id: "${id}") { description version } }`, { token: cleo.token });
    expect(saved.body.data.category).toEqual({ description: "root's", version: 3 });
    await done(page);
  }, 30_000);

  /** The categories the page lists, in its order. */
  function listed(page: Page): Promise<string[]> {
    return page.locator("li[data-category]").evaluateAll((items) => items.map((item: any) => item.dataset.category));
  }

  test("a category another user creates, renames or deletes through the API shows in the open categories view, in the list's order, without a reload", async () => {
    const dana = await svc.signUp("dana");
    const create = async (name: string) => {
      const made = await svc.graphql("mutation ($name: String!) { createCategory(input: { name: $name }) { id } }", {
        token: dana.token,
        variables: { name },
      });
      return made.body.data.createCategory.id as string;
    };
    await create("Middle maps");
    const { page } = await open();
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByRole("link", { name: "Categories" }).click();
    // The list is read once the subscription is open: from here on every change reaches the page.
    await page.locator('li[data-category="Middle maps"]').waitFor();
    // any: the page's window, which these (Bun's) types do not describe. A reload would lose the mark.
    await page.evaluate(() => ((globalThis as any).notReloaded = true));

    const aardvark = await create("aardvark atlas");
    const zebra = await create("Zebra guide");
    await page.locator('li[data-category="Zebra guide"]').getByText("by dana").waitFor();
    await page.locator('li[data-category="aardvark atlas"]').waitFor();
    const inOrder = async () =>
      (await svc.graphql("{ categories { name } }", { token: dana.token })).body.data.categories.map(
        (category: { name: string }) => category.name,
      );
    expect(await listed(page)).toEqual(await inOrder());

    // Renamed, it moves to its new place.
    await svc.graphql(`mutation { updateCategory(id: "${zebra}", input: { name: "Bee guide" }) { id } }`, {
      token: dana.token,
    });
    await page.locator('li[data-category="Bee guide"]').waitFor();
    expect(await page.locator('li[data-category="Zebra guide"]').count()).toBe(0);
    expect(await listed(page)).toEqual(await inOrder());

    await svc.graphql(`mutation { deleteCategory(id: "${aardvark}") }`, { token: dana.token });
    await page.locator('li[data-category="aardvark atlas"]').waitFor({ state: "detached" });
    expect(await listed(page)).toEqual(await inOrder());
    expect(await page.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
    expect(await page.getByRole("alert").count()).toBe(0);
    await done(page);
  }, 30_000);

  test("a new account from the users view; an invitation issued, shown once, redeemed and listed; another revoked", async () => {
    const { page, outside, refused } = await open();
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByRole("heading", { name: "Users" }).waitFor();
    await page.getByRole("button", { name: "New account" }).click();
    const form = page.getByRole("form", { name: "New account" });
    await form.getByLabel("Username").fill("carl");
    await form.getByLabel("E-mail").fill("carl@example.com");
    await form.getByLabel("Password").fill("carl's long secret");
    await form.getByLabel("Role of the account").selectOption("admin");
    await expect(accessibilityProblems(page)).resolves.toEqual([]);
    await form.getByRole("button", { name: "Create account" }).click();
    await page.getByRole("status").filter({ hasText: "carl created (admin)" }).waitFor();
    // Past the first page of this svc's many accounts: found by name.
    await page.getByLabel("Search (start of username or e-mail)").fill("carl");
    await page.getByRole("button", { name: "Find" }).click();
    await page.locator('tr[data-user="carl"] td[data-label="Role"]', { hasText: "admin" }).waitFor();
    expect(await svc.store.users.findByLogin("carl")).toMatchObject({ role: "admin", email: "carl@example.com" });

    await page.getByRole("link", { name: "Invitations" }).click();
    await page.getByRole("heading", { name: "Invitations" }).waitFor();
    await page.getByLabel("For e-mail (leave empty for anyone)").fill("dee@example.com");
    await page.getByLabel("Lasts").selectOption("24h");
    await page.getByRole("button", { name: "Issue invitation" }).click();
    const shown = page.getByRole("region", { name: "Invitation code" });
    const code = (await shown.locator("code").textContent())!;
    expect(code).toMatch(CODE);
    await expect(shown.textContent()).resolves.toContain("dee@example.com");
    await expect(accessibilityProblems(page)).resolves.toEqual([]);
    await shoot(page, "invitations");
    // dee signs up with it, on an instance whose sign-up is by invitation.
    const invite = await testApp({ on: svc.store, config: { signup: { mode: "invite" } } });
    const dee = await invite.call("POST", "/svc-api/v1/users/create", {
      body: { username: "dee", email: "dee@example.com", password: "dee's long secret", invitation: code },
    });
    expect(dee.status).toBe(201);
    // Another, for anyone: the list is read again, showing who used the first.
    await page.getByRole("button", { name: "Issue invitation" }).click();
    await page.getByRole("status").filter({ hasText: "Invitation issued" }).waitFor();
    const deeRow = page.locator("tbody tr", { hasText: "dee@example.com" });
    await deeRow.locator('td[data-label="Used by"]').getByText("dee", { exact: true }).waitFor();
    await expect(deeRow.locator('td[data-label="Issued by"]').textContent()).resolves.toBe("root");
    expect(await page.locator("tbody").textContent()).not.toContain(code);
    const anyone = page.locator("tbody tr", { has: page.locator("th", { hasText: "anyone" }) });
    await anyone.getByRole("button", { name: "Revoke" }).click();
    await anyone.getByRole("button", { name: "Yes, revoke" }).click();
    await page.getByRole("status").filter({ hasText: "Invitation revoked" }).waitFor();
    await anyone.waitFor({ state: "detached" });
    expect((await svc.store.invitations.list({ limit: 10 })).map((i) => i.email)).toEqual(["dee@example.com"]);
    expect(await outside()).toEqual([]);
    expect(refused).toEqual([]);
    await done(page);
  }, 30_000);

  test("the backups view shows the schedule and the snapshots, and backs up now", async () => {
    const { page, outside, refused } = await open();
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByRole("link", { name: "Backups" }).click();
    await page.getByRole("heading", { name: "Backups" }).waitFor();
    await page.getByText("only when asked").waitFor();
    await page.getByRole("button", { name: "Back up now" }).click();
    // The run ends in the view: its snapshot listed, with its size, and the status back from "running…".
    const row = page.locator("tbody tr", { hasText: /svc-\d{8}T\d{6}Z-.*\.db\.gz/ });
    await row.waitFor();
    await page.getByRole("button", { name: "Back up now" }).waitFor();
    expect(await row.textContent()).toMatch(/\d+ B/);
    expect(await accessibilityProblems(page)).toEqual([]);
    expect(await outside()).toEqual([]);
    expect(refused).toEqual([]);
    await done(page);
  }, 30_000);

  /** Backups to a temp folder, taken only when asked, their snapshot a small stand-in (the view is what is tested). */
  function folderBackups(): Backups {
    const folder = mkdtempSync(join(tmpdir(), "svc-console-backups-"));
    mkdirSync(join(folder, "to"));
    made.push(folder);
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

  describe("its session, in svc's refresh cookie", () => {
    // Access tokens of 3 s: the console renews each shortly before it expires, so within seconds each tab
    // has refreshed more than once, and the token of a page that cannot renew has expired.
    let short: Awaited<ReturnType<typeof testApp>>;
    let url: string;
    let stop: () => void;

    beforeAll(async () => {
      short = await testApp({ config: { jwt: { ...testConfig().jwt, ttlSeconds: 3 } } });
      const root = await short.signUp("root", ROOT_PASSWORD);
      await promote(short.store, root.user.id);
      const server = short.app.listen({ port: 0, hostname: "127.0.0.1", reusePort: false });
      url = `http://127.0.0.1:${server.port}/svc/admin`;
      stop = () => void server.stop();
    });
    afterAll(() => stop?.());

    async function signedIn(page: Page) {
      await page.getByRole("heading", { name: "Users" }).waitFor();
      await page.getByRole("button", { name: "Sign out" }).waitFor();
    }

    /** The page's refreshes since it loaded: when each started (ms since the epoch), and svc's status. */
    function refreshes(page: Page): Promise<Array<{ at: number; status: number }>> {
      return page.evaluate(() =>
        performance
          .getEntriesByType("resource")
          .filter((entry) => entry.name.endsWith("/svc-api/v1/auth/refresh"))
          // any: responseStatus, which these (Bun's) types do not describe.
          .map((entry: any) => ({ at: performance.timeOrigin + entry.startTime, status: entry.responseStatus })),
      );
    }

    /** root's live sessions that Chromium started, as svc lists them to a login of the test's own. */
    async function sessionsInChromium(): Promise<unknown[]> {
      const login = await short.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "root", password: ROOT_PASSWORD },
      });
      const sessions = await short.call("GET", "/svc-api/v1/auth/sessions", { token: login.body.token });
      return sessions.body.filter((session: { user_agent: string | null }) => session.user_agent?.includes("Chrome"));
    }

    /** Asks again every 50 ms until `condition` holds, for up to 20 s. */
    async function until(what: string, condition: () => Promise<boolean>) {
      for (const deadline = Date.now() + 20_000; !(await condition()); await Bun.sleep(50)) {
        if (Date.now() > deadline) throw new Error(`not so after 20 s: ${what}`);
      }
    }

    /** A list of accounts read afresh: it shows only once a request with a valid access token went through. */
    async function listsAfresh(page: Page, search: string) {
      await page.getByLabel("Search (start of username or e-mail)").fill(search);
      await page.getByRole("button", { name: "Find" }).click();
      await page.getByText("No accounts match.").waitFor();
      expect(await page.getByRole("alert").count()).toBe(0);
    }

    test("a reload and a duplicated tab stay signed in; both tabs renew the one session in turn, and it lives on", async () => {
      const context = await browser.newContext();
      const first = await context.newPage();
      await first.goto(url);
      await signIn(first, "root", ROOT_PASSWORD);
      await signedIn(first);
      await first.reload();
      await signedIn(first);
      // A duplicated tab: the same URL in a second page of the same browser, which shares its cookies.
      const second = await context.newPage();
      await second.goto(url);
      await signedIn(second);

      // Each tab renews its access token by the cookie, in turn: each after the other, and the other way round.
      const turns = async () =>
        [
          ...(await refreshes(first)).map((refresh) => ({ ...refresh, tab: "1" })),
          ...(await refreshes(second)).map((refresh) => ({ ...refresh, tab: "2" })),
        ].sort((a, b) => a.at - b.at);
      await until("each tab refreshed three times, each after the other", async () => {
        const order = (await turns()).map((turn) => turn.tab).join("");
        return (
          order.includes("12") &&
          order.includes("21") &&
          order.replaceAll("2", "").length >= 3 &&
          order.replaceAll("1", "").length >= 3
        );
      });
      expect(new Set((await turns()).map((turn) => turn.status))).toEqual(new Set([200]));
      for (const page of [first, second]) {
        await signedIn(page);
        await listsAfresh(page, "nobody");
        expect(await storageIsEmpty(page)).toBe(true);
      }
      expect(await sessionsInChromium()).toHaveLength(1);

      // Both tabs reloaded at once refresh at once, by the same cookie: they share its one successor.
      await Promise.all([first.reload(), second.reload()]);
      for (const page of [first, second]) {
        await signedIn(page);
        await listsAfresh(page, "nobody");
        expect(new Set((await refreshes(page)).map((refresh) => refresh.status))).toEqual(new Set([200]));
      }
      expect(await sessionsInChromium()).toHaveLength(1);

      // Signed out in one tab, the other finds the session gone at its next renewal.
      await second.getByRole("button", { name: "Sign out" }).click();
      await second.getByRole("button", { name: "Sign in" }).waitFor();
      await first.getByRole("button", { name: "Sign in" }).waitFor();
      expect(await sessionsInChromium()).toEqual([]);
      await done(first);
    }, 60_000);

    test("the categories view outlives its access tokens: re-subscribed with the last cursor, it loses no category created meanwhile", async () => {
      const eve = await short.signUp("eve");
      let token = eve.token;
      const created: string[] = [];
      /** Creates a category as eve, signing her in again once her 3 s token has expired. */
      const create = async (name: string) => {
        for (let attempt = 0; attempt < 2; attempt++) {
          const made = await short.graphql(
            "mutation ($name: String!) { createCategory(input: { name: $name }) { id } }",
            {
              token,
              variables: { name },
            },
          );
          if (made.body.data?.createCategory) return void created.push(name);
          const login = await short.call("POST", "/svc-api/v1/auth/login", {
            body: { username: "eve", password: eve.password },
          });
          token = login.body.token;
        }
        throw new Error(`could not create ${name}`);
      };
      await create("Before");
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${url}#/categories`);
      await signIn(page, "root", ROOT_PASSWORD);
      // Read once the page's subscription is open, with an access token issued before the next login.
      await page.locator('li[data-category="Before"]').waitFor();

      // Categories created one after another until a token issued after the page's has expired (so the
      // page's has, and svc ended its stream with TOKEN_EXPIRED), and one more after that.
      const later = await short.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "root", password: ROOT_PASSWORD },
      });
      let n = 0;
      await until("an access token issued after the page's is refused", async () => {
        await create(`Around ${String(n++).padStart(3, "0")}`);
        return (await short.call("GET", "/svc-api/v1/users/me", { token: later.body.token })).status === 401;
      });
      await create("After");
      await page.locator('li[data-category="After"]').waitFor();
      await until("every category created is listed", async () => (await listed(page)).length === created.length);
      expect(await listed(page)).toEqual(created.toSorted((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
      await page.getByRole("button", { name: "Sign out" }).waitFor();
      expect(await page.getByRole("alert").count()).toBe(0);
      // One stream, not one per renewal.
      const streams = async () =>
        Number(
          /^svc_subscriptions_open\{transport="sse".*\} (\d+)$/m.exec(
            (await short.call("GET", "/svc/metrics")).text,
          )?.[1],
        );
      await until("one stream open", async () => (await streams()) === 1);
      // Signing out ends the stream (and the session, which the next test counts on).
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      await until("no stream open once signed out", async () => (await streams()) === 0);
      await done(page);
    }, 60_000);

    test("signing out after the access token expired ends the session on the server: its cookie no longer refreshes", async () => {
      const context = await browser.newContext();
      // No refresh gets through: the page keeps the access token it signed in with, as a tab left asleep would.
      await context.route("**/svc-api/v1/auth/refresh", (route) => route.abort());
      const page = await context.newPage();
      await page.goto(url);
      await signIn(page, "root", ROOT_PASSWORD);
      await signedIn(page);
      // A token issued after the page's, as long-lived: once it is refused, the page's has expired too.
      const later = await short.call("POST", "/svc-api/v1/auth/login", {
        body: { username: "root", password: ROOT_PASSWORD },
      });
      await until("an access token issued after the page's is refused", async () => {
        const me = await short.call("GET", "/svc-api/v1/users/me", { token: later.body.token });
        return me.status === 401;
      });
      const cookie = (await context.cookies()).find((c) => c.name === "svc_refresh");
      expect(cookie?.httpOnly).toBe(true);

      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByRole("button", { name: "Sign in" }).waitFor();
      expect((await context.cookies()).map((c) => c.name)).not.toContain("svc_refresh");
      expectProblem(
        await short.call("POST", "/svc-api/v1/auth/refresh", {
          headers: {
            origin: "http://localhost",
            "content-type": "application/json",
            cookie: `svc_refresh=${cookie!.value}`,
          },
        }),
        401,
        "invalid_refresh_token",
      );
      expect(await sessionsInChromium()).toEqual([]);
      expect(await storageIsEmpty(page)).toBe(true);
      await done(page);
    }, 30_000);
  });

  test("reads on a phone: nothing wider than the screen, every view reachable", async () => {
    const { page } = await open(375);
    await signIn(page, "root", ROOT_PASSWORD);
    await page.getByRole("heading", { name: "Users" }).waitFor();
    const overflow = () =>
      page.evaluate(() => {
        // any: the page's DOM, which these (Bun's) types do not describe.
        const root = (globalThis as any).document.documentElement;
        return root.scrollWidth - root.clientWidth;
      });
    expect(await overflow()).toBeLessThanOrEqual(0);
    await shoot(page, "phone");
    for (const view of ["Invitations", "Categories", "Audit log", "Backups"]) {
      await page.getByRole("link", { name: view }).click();
      await page.getByRole("heading", { name: view }).waitFor();
      expect(await overflow()).toBeLessThanOrEqual(0);
    }
    await done(page);
  }, 30_000);
});
