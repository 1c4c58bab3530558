// The admin console in a real browser: Debian's Chromium driven by playwright-core, against a listening
// svc (test/e2e/support/console.ts). An operator's day: sign in, find and disable a user, issue a reset code,
// change categories, read the audit log; categories others change, shown as they change; with axe-core's
// accessibility check on every view, and not one request to any other origin. Its session is in
// console-browser-session.test.ts. Without Chromium the test is skipped, except with CI=true (.ci/run
// installs it).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Page } from "playwright-core";
import { type Backups } from "../../src/backup/service.ts";
import { chromiumAvailable } from "./chromium.ts";
import { expectProblem, testApp, promote } from "../helpers.ts";

import {
  accessibilityProblems,
  accounts,
  CODE,
  type Console,
  done,
  listed,
  openConsole,
  ROOT_PASSWORD,
  shoot,
  signIn,
  startConsole,
  storageIsEmpty,
} from "./support/console.ts";

describe.skipIf(!chromiumAvailable)("the console in Chromium", () => {
  let browser: Console["browser"];
  let base: string;
  let close: Console["close"];
  let svc: Console["svc"];
  let ann: Console["ann"];
  let bob: Console["bob"];

  beforeAll(async () => {
    ({ svc, ann, bob, base, browser, close } = await startConsole());
  }, 30_000);
  afterAll(() => close?.());

  /** A page on the console, at this width; `outside()` lists the requests it made to another origin. */
  const open = (width?: number) => openConsole({ browser, base }, width);

  test("a user who is not an administrator is told so, and gets no further", async () => {
    const { page } = await open();
    await signIn(page, "ann", ann.password);
    expect(await page.getByRole("alert").textContent()).toContain("Not an administrator");
    expect(await page.getByRole("navigation", { name: "Console" }).count()).toBe(0);
    // Its session was ended at once: ann has only the one from her sign-up.
    const sessions = await svc.call("GET", "/svc-api/v1/auth/sessions", { token: ann.token });
    expect(sessions.body).toHaveLength(1);
    expect(await accessibilityProblems(page)).toEqual([]);
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
    expect(await status.textContent()).toMatch(/health ok.*version \S+.*environment test.*database sqlite/);
    expect(await accessibilityProblems(page)).toEqual([]);
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
    const annStatus = annRow.locator('td[data-label="Status"] .badge');
    await annStatus.filter({ hasText: "disabled" }).waitFor();
    expect(await annStatus.textContent()).toBe("disabled");
    expectProblem(await svc.call("GET", "/svc-api/v1/users/me", { token: ann.token }), 401, "unauthorized");

    // Ann's address, unverified since she signed up, marked verified.
    const annEmail = annRow.locator('td[data-label="E-mail"] .badge');
    expect(await annEmail.textContent()).toBe("unverified");
    await annRow.getByRole("button", { name: "Mark verified" }).click();
    await annEmail.filter({ hasText: /^verified$/ }).waitFor();
    expect(await annRow.getByRole("button", { name: "Mark verified" }).count()).toBe(0);

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
    expect(await accessibilityProblems(page)).toEqual([]);
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
    expect(await accessibilityProblems(page)).toEqual([]);
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
        "email_verification.sent",
        "email_verification.marked",
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
      expect(await page.locator(`li[data-category="Yan's"]`).textContent()).toContain("no creator");

      await page.getByRole("link", { name: "Audit log" }).click();
      await page.getByLabel("User (username, e-mail or id)").fill(yan.user.id);
      await page.getByRole("button", { name: "Show" }).click();
      // yan's own deletion: by yan, on yan, who is known only by id now.
      const gone = page.locator('tr[data-action="user.deleted"]');
      await gone.waitFor();
      expect(await gone.locator('td[data-label="By"]').textContent()).toBe(yan.user.id);
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
    await accounts(svc, "page-", 22);
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
    expect(await page.getByRole("alert").textContent()).toStartWith(
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
    expect(await accessibilityProblems(page)).toEqual([]);
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
    expect(await shown.textContent()).toContain("dee@example.com");
    expect(await accessibilityProblems(page)).toEqual([]);
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
    expect(await deeRow.locator('td[data-label="Issued by"]').textContent()).toBe("root");
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
});
