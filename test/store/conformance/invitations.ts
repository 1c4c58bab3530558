// Invitations: issued with their event, listed newest first without digests, revoked by deletion, and
// redeemed once, in one change with the account they make.
import { beforeEach, describe, expect, test } from "bun:test";
import type { NewInvitation, Store } from "../../../src/db/store.ts";
import { clock, event, expectCode, newUser, tick } from "./fixtures.ts";

export function invitationsContract(use: () => Store): void {
  describe("invitations", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    const day = 86_400_000;
    const invitation = (overrides: Partial<NewInvitation> = {}): NewInvitation => ({
      id: Bun.randomUUIDv7(),
      digest: `digest-${Bun.randomUUIDv7()}`,
      email: null,
      createdBy: null,
      createdAt: tick(),
      expiresAt: new Date(clock.ms + day).toISOString(),
      ...overrides,
    });
    async function issued(overrides: Partial<NewInvitation> = {}) {
      const made = invitation(overrides);
      await store.invitations.issue(made, event("invitation.issued", { targetId: made.id }));
      return made;
    }
    /** The events a redemption records: the account's creation and the invitation spent. */
    const events = () => ({ created: event("user.created"), redeemed: event("invitation.redeemed") });

    test("issuing records the invitation and its event; the list shows it without its digest, newest first", async () => {
      const admin = await store.users.create(newUser("root"));
      const first = await issued({ email: "ann@example.com", createdBy: admin.id });
      const issuedEvent = (await store.audit.list({ limit: 1 }))[0];
      expect(issuedEvent).toMatchObject({ action: "invitation.issued", targetId: first.id });
      const second = await issued();
      const listed = await store.invitations.list({ limit: 10 });
      expect(listed).toEqual([
        {
          id: second.id,
          email: null,
          createdBy: null,
          createdAt: second.createdAt,
          expiresAt: second.expiresAt,
          usedAt: null,
          usedBy: null,
        },
        {
          id: first.id,
          email: "ann@example.com",
          createdBy: admin.id,
          createdAt: first.createdAt,
          expiresAt: first.expiresAt,
          usedAt: null,
          usedBy: null,
        },
      ]);
      expect(await store.invitations.list({ limit: 1, before: second.id })).toEqual([listed[1]!]);
      expect(await store.invitations.list({ limit: 10, before: first.id })).toEqual([]);
      expect(await store.invitations.list({ limit: 10, before: "not-an-id" })).toEqual([]);
    });

    test("redeeming makes the account and spends the invitation in one change, with both events", async () => {
      const code = await issued();
      const ann = newUser("ann");
      const { created, redeemed } = events();
      const made = await store.invitations.redeem(code.digest, ann, { created, redeemed });
      expect(made).toMatchObject({ id: ann.id, username: "ann", role: "user", status: "active", tokenVersion: 0 });
      expect(await store.users.findByLogin("ann")).toEqual(made as Exclude<typeof made, "invalid">);
      const [listed] = await store.invitations.list({ limit: 1 });
      expect(listed).toMatchObject({ id: code.id, usedAt: ann.createdAt, usedBy: ann.id });
      const log = await store.audit.list({ limit: 10 });
      // The store names the invitation spent, which the caller knew only by its code.
      expect(log.slice(0, 2)).toEqual(
        [created, { ...redeemed, targetId: code.id }].sort((a, b) => (a.id < b.id ? 1 : -1)),
      );
      // Spent: a second time it is invalid, and nothing is written.
      expect(await store.invitations.redeem(code.digest, newUser("bob"), events())).toBe("invalid");
      expect(await store.users.findByLogin("bob")).toBeNull();
      expect(await store.audit.list({ limit: 10 })).toHaveLength(log.length);
    });

    test("unknown, expired, revoked, or for another address: invalid, and no account is made", async () => {
      const expired = await issued({ expiresAt: new Date(clock.ms + 500).toISOString() });
      const revoked = await issued();
      const forAnn = await issued({ email: "ann@example.com" });
      expect(await store.invitations.revoke(revoked.id, event("invitation.revoked"))).toMatchObject({ id: revoked.id });
      for (const digest of ["no-such-digest", expired.digest, revoked.digest, forAnn.digest])
        expect({ digest, result: await store.invitations.redeem(digest, newUser("bob"), events()) }).toEqual({
          digest,
          result: "invalid",
        });
      expect(await store.users.findByLogin("bob")).toBeNull();
      // For its own address it works.
      expect(typeof (await store.invitations.redeem(forAnn.digest, newUser("ann"), events()))).toBe("object");
    });

    test("a taken name leaves the invitation unspent; of concurrent redemptions exactly one lands", async () => {
      await store.users.create(newUser("ann"));
      const code = await issued();
      await expectCode(
        store.invitations.redeem(code.digest, newUser("ANN", { email: "x@example.com" }), events()),
        "username_taken",
      );
      await expectCode(
        store.invitations.redeem(code.digest, newUser("other", { email: "ann@example.com" }), events()),
        "email_taken",
      );
      expect((await store.invitations.list({ limit: 1 }))[0]!.usedAt).toBeNull();
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => store.invitations.redeem(code.digest, newUser(`racer${i}`), events())),
      );
      expect(results.filter((r) => typeof r === "object")).toHaveLength(1);
      expect(results.filter((r) => r === "invalid")).toHaveLength(5);
      expect((await store.users.search({ search: "racer", limit: 10 })).length).toBe(1);
    });

    test("revoking deletes it, used or not, with its event; an unknown id is null and records nothing", async () => {
      const code = await issued();
      await store.invitations.redeem(code.digest, newUser("ann"), events());
      const before = (await store.audit.list({ limit: 100 })).length;
      expect(await store.invitations.revoke(code.id, event("invitation.revoked", { targetId: code.id }))).toMatchObject(
        {
          id: code.id,
          usedBy: expect.any(String),
        },
      );
      expect(await store.invitations.list({ limit: 10 })).toEqual([]);
      expect(await store.users.findByLogin("ann")).not.toBeNull();
      expect(await store.invitations.revoke(code.id, event("invitation.revoked"))).toBeNull();
      expect(await store.invitations.revoke("not-an-id", event("invitation.revoked"))).toBeNull();
      expect((await store.audit.list({ limit: 100 })).length).toBe(before + 1);
    });

    test("prune forgets expired invitations only, redeemed or not", async () => {
      await issued({ expiresAt: new Date(clock.ms + 1000).toISOString() });
      const used = await issued({ expiresAt: new Date(clock.ms + 2000).toISOString() });
      await store.invitations.redeem(used.digest, newUser("ann"), events());
      const live = await issued();
      clock.ms += 5000;
      expect(await store.invitations.prune(new Date(clock.ms).toISOString(), 10)).toBe(2);
      expect(await store.invitations.prune(new Date(clock.ms).toISOString(), 10)).toBe(0);
      expect((await store.invitations.list({ limit: 10 })).map((i) => i.id)).toEqual([live.id]);
    });
  });
}
