// @svc/client's client.admin against the app in process, signed in as an administrator made by `promote`:
// accounts and their reset codes, invitations and the audit log, each call typed from svc's OpenAPI document.
// The mail outbox and backups: admin-outbox.test.ts. The routes' own rules: test/api/admin*.test.ts.
import { describe, expect, test } from "bun:test";
import type { Client } from "../../client/src/index.ts";
import { testApp } from "../helpers.ts";
import { adminOf, all, clientOf, codeOf } from "../support/in-process-client.ts";

/** An app with an administrator signed in on a client (`admin`), and ann, a user. */
async function adminClient() {
  const app = await testApp();
  const { admin, root } = await adminOf(app);
  const ann = await app.signUp("ann");
  return { app, root, ann, admin };
}

describe("client.admin.users", () => {
  test("list: every account, oldest first, page by page; filtered by search, role and status", async () => {
    const { app, admin } = await adminClient();
    for (const name of ["bob", "cat", "dan"]) await app.signUp(name);
    const everyone = await all(admin.admin.users.list());
    expect(everyone.map((u) => u.username)).toEqual(["root", "ann", "bob", "cat", "dan"]);
    expect(everyone[0]).toMatchObject({ role: "admin", status: "active", email: "root@example.com" });
    const pages = await all(admin.admin.users.list({ limit: 2 }).pages());
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect((await all(admin.admin.users.list({ search: "CA" }))).map((u) => u.username)).toEqual(["cat"]);
    expect((await all(admin.admin.users.list({ role: "admin" }))).map((u) => u.username)).toEqual(["root"]);
    expect(await all(admin.admin.users.list({ status: "disabled" }))).toEqual([]);
  });

  test("create, get, update, delete: an account of either role; last_admin and not_found as SvcError", async () => {
    const { admin, root } = await adminClient();
    const eve = await admin.admin.users.create(
      { username: "eve", email: "eve@example.com", password: "correct horse battery", role: "admin" },
      { idempotencyKey: "eve-1" },
    );
    expect(eve).toMatchObject({ username: "eve", role: "admin", status: "active", last_login_at: null });
    // The same key again: the first answer, not username_taken.
    const again = await admin.admin.users.create(
      { username: "eve", email: "eve@example.com", password: "correct horse battery", role: "admin" },
      { idempotencyKey: "eve-1" },
    );
    expect(again.id).toBe(eve.id);
    expect(await admin.admin.users.get(eve.id)).toEqual(eve);
    const disabled = await admin.admin.users.update(eve.id, { status: "disabled", role: "user" });
    expect(disabled).toMatchObject({ id: eve.id, status: "disabled", role: "user" });
    expect(await codeOf(admin.admin.users.update(root.user.id, { role: "user" }))).toEqual({
      status: 409,
      code: "last_admin",
    });
    await admin.admin.users.delete(eve.id);
    expect(await codeOf(admin.admin.users.get(eve.id))).toEqual({ status: 404, code: "not_found" });
    expect(await codeOf(admin.admin.users.delete(root.user.id))).toEqual({ status: 409, code: "last_admin" });
  });

  test("issueReset: a code its owner redeems on their own client; markEmailVerified; resetSecondFactors", async () => {
    const { app, admin, ann } = await adminClient();
    const issued = await admin.admin.users.issueReset(ann.user.id);
    expect(issued.reset_code).toMatch(/^[0-9A-Z]{4}(-[0-9A-Z]{4}){7}$/);
    const owner: Client = clientOf(app);
    const redeemed = await owner.auth.redeemReset({
      username: "ann",
      reset_code: issued.reset_code,
      new_password: "a brand new secret",
    });
    expect(redeemed.mfaRequired).toBe(false);
    expect(owner.auth.session?.user.id).toBe(ann.user.id);

    const verified = await admin.admin.users.markEmailVerified(ann.user.id);
    expect(verified.email_verified).toBe(true);
    expect(verified.email_verified_at).not.toBeNull();
    await admin.admin.users.resetSecondFactors(ann.user.id);
    const reset = await all(admin.admin.audit({ action: "mfa.reset", target: ann.user.id }));
    expect(reset).toHaveLength(1);
  });

  test("a user's session: forbidden (403) on every admin call; signed out: unauthorized (401)", async () => {
    const { app, ann } = await adminClient();
    const user = clientOf(app);
    await user.auth.login({ username: "ann", password: ann.password });
    const calls: [string, (c: Client) => Promise<unknown>][] = [
      ["users.list", (c) => all(c.admin.users.list())],
      ["users.get", (c) => c.admin.users.get(ann.user.id)],
      ["users.issueReset", (c) => c.admin.users.issueReset(ann.user.id)],
      ["invitations.issue", (c) => c.admin.invitations.issue()],
      ["audit", (c) => all(c.admin.audit())],
      ["mail.list", (c) => all(c.admin.mail.list())],
      ["backups.get", (c) => c.admin.backups.get()],
    ];
    for (const [name, call] of calls) {
      expect({ name, ...(await codeOf(call(user))) }).toEqual({ name, status: 403, code: "forbidden" });
      expect({ name, ...(await codeOf(call(clientOf(app)))) }).toEqual({ name, status: 401, code: "unauthorized" });
    }
  });
});

describe("client.admin.invitations and audit", () => {
  test("issue, list and revoke; the code signs a user up where sign-up is by invitation", async () => {
    const { app, admin, root } = await adminClient();
    const anyone = await admin.admin.invitations.issue();
    const forKim = await admin.admin.invitations.issue({ email: "kim@example.com", expires_in: "2d" });
    expect(forKim.email).toBe("kim@example.com");
    const days = (Date.parse(forKim.expires_at) - Date.now()) / 86_400_000;
    expect(Math.round(days)).toBe(2);
    const listed = await all(admin.admin.invitations.list());
    expect(listed.map((i) => i.id)).toEqual([forKim.id, anyone.id]);
    expect(listed[0]).toMatchObject({ created_by: root.user.id, used_at: null });
    expect((await all(admin.admin.invitations.list({ limit: 1 }).pages())).length).toBe(2);

    await admin.admin.invitations.revoke(anyone.id);
    expect((await all(admin.admin.invitations.list())).map((i) => i.id)).toEqual([forKim.id]);
    expect(await codeOf(admin.admin.invitations.revoke(anyone.id))).toEqual({ status: 404, code: "not_found" });

    const invited = clientOf(await testApp({ on: app.store, config: { signup: { mode: "invite" } } }));
    const kim = { username: "kim", email: "kim@example.com", password: "correct horse battery" };
    expect(await codeOf(invited.users.create(kim))).toEqual({ status: 403, code: "invitation_required" });
    expect((await invited.users.create({ ...kim, invitation: forKim.code })).username).toBe("kim");
  });

  test("audit: newest first, filtered by action and user, page by page", async () => {
    const { admin, ann } = await adminClient();
    await admin.admin.users.update(ann.user.id, { status: "disabled" });
    await admin.admin.users.update(ann.user.id, { status: "active" });
    const updates = await all(admin.admin.audit({ action: "admin.user.updated", target: ann.user.id }));
    expect(updates.map((e) => e.detail)).toEqual([
      expect.objectContaining({ status: "active" }),
      expect.objectContaining({ status: "disabled" }),
    ]);
    const everything = await all(admin.admin.audit({ user: ann.user.id }));
    const paged = (await all(admin.admin.audit({ user: ann.user.id, limit: 1 }).pages())).flat();
    expect(paged.map((e) => e.id)).toEqual(everything.map((e) => e.id));
    expect(everything.length).toBeGreaterThan(2);
    expect(await codeOf(all(admin.admin.audit({ since: "not a time" })))).toEqual({
      status: 400,
      code: "validation_failed",
    });
  });
});
