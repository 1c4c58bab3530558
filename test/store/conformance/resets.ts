// Password reset codes: issued one per user, redeemed once in one change with a new session.
import { beforeEach, describe, expect, test } from "bun:test";
import { type Store, type UserRecord } from "../../../src/db/store.ts";
import { newSession, newUser, event, tick, clock } from "./fixtures.ts";

export function resetsContract(use: () => Store): void {
  describe("password resets", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    const day = 86_400_000;
    async function issued(
      user: UserRecord,
      digest = `code-${Bun.randomUUIDv7()}`,
      expiresAt = new Date(clock.ms + day).toISOString(),
    ) {
      expect(
        await store.resets.issue(
          { digest, userId: user.id, createdAt: tick(), expiresAt, issuedBy: null },
          event("password_reset.issued"),
        ),
      ).toBe(true);
      return digest;
    }
    const redemption = (user: UserRecord) => {
      const at = tick();
      return {
        passwordHash: `new-hash-${Bun.randomUUIDv7()}`,
        at,
        session: newSession(user.id, at),
        refresh: { digest: `refresh-${Bun.randomUUIDv7()}`, expiresAt: new Date(clock.ms + day).toISOString() },
      };
    };

    test("redeeming sets the password, bumps the token version, ends every session and starts one", async () => {
      const ann = await store.users.create(newUser("ann"));
      const old = redemption(ann);
      await store.sessions.start(old.session, old.refresh, { tokenVersion: 0 });
      const code = await issued(ann);
      const r = redemption(ann);
      const redeemed = event("password_reset.redeemed");
      const user = await store.resets.redeem(code, ann.id, r, redeemed);
      expect(user).toMatchObject({ passwordHash: r.passwordHash, tokenVersion: 1, lastLoginAt: r.at, updatedAt: r.at });
      const live = await store.sessions.list(ann.id, new Date(clock.ms).toISOString());
      expect(live.map((s) => s.id)).toEqual([r.session.id]);
      expect(await store.sessions.findRefresh(old.refresh.digest)).toBeNull();
      expect((await store.audit.list({ limit: 10 }))[0]).toEqual(redeemed);
      // Spent: a second time it is invalid, and changes nothing.
      expect(await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      expect((await store.users.findById(ann.id))!.tokenVersion).toBe(1);
    });

    test("of concurrent redemptions of one code exactly one lands", async () => {
      const ann = await store.users.create(newUser("ann"));
      const code = await issued(ann);
      const results = await Promise.all(
        Array.from({ length: 6 }, () =>
          store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed")),
        ),
      );
      expect(results.filter((r) => typeof r === "object")).toHaveLength(1);
      expect(results.filter((r) => r === "invalid")).toHaveLength(5);
      expect((await store.users.findById(ann.id))!.tokenVersion).toBe(1);
      expect(await store.sessions.list(ann.id, new Date(clock.ms).toISOString())).toHaveLength(1);
    });

    test("a code is invalid for another user, once expired, or once replaced by a newer one", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const code = await issued(ann);
      expect(await store.resets.redeem(code, bob.id, redemption(bob), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      expect(await store.resets.redeem(code, "not-an-id", redemption(bob), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      const newer = await issued(ann);
      expect(await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      const expired = await issued(bob, "short", new Date(clock.ms + 500).toISOString());
      expect(await store.resets.redeem(expired, bob.id, redemption(bob), event("password_reset.redeemed"))).toBe(
        "invalid",
      );
      expect(typeof (await store.resets.redeem(newer, ann.id, redemption(ann), event("password_reset.redeemed")))).toBe(
        "object",
      );
    });

    test("a disabled account's code is refused and stays; issuing for a user who is gone is false", async () => {
      const ann = await store.users.create(newUser("ann"));
      const code = await issued(ann);
      await store.users.administer(ann.id, { status: "disabled" }, tick(), event("admin.user.updated"));
      expect(await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed"))).toBe(
        "disabled",
      );
      await store.users.administer(ann.id, { status: "active" }, tick(), event("admin.user.updated"));
      expect(typeof (await store.resets.redeem(code, ann.id, redemption(ann), event("password_reset.redeemed")))).toBe(
        "object",
      );
      const ghost = await store.users.create(newUser("ghost"));
      await store.users.delete(ghost.id);
      expect(
        await store.resets.issue(
          {
            digest: "ghost-code",
            userId: ghost.id,
            createdAt: tick(),
            expiresAt: new Date(clock.ms + day).toISOString(),
            issuedBy: null,
          },
          event("password_reset.issued"),
        ),
      ).toBe(false);
      expect((await store.audit.list({ action: "password_reset.issued", limit: 10 })).length).toBe(1);
    });

    test("prune forgets expired codes only", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      await issued(ann, "old", new Date(clock.ms + 1000).toISOString());
      const live = await issued(bob);
      clock.ms += 5000;
      expect(await store.resets.prune(new Date(clock.ms).toISOString(), 10)).toBe(1);
      expect(await store.resets.prune(new Date(clock.ms).toISOString(), 10)).toBe(0);
      expect(typeof (await store.resets.redeem(live, bob.id, redemption(bob), event("password_reset.redeemed")))).toBe(
        "object",
      );
    });
  });
}
