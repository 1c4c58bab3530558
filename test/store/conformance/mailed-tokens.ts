// Resets and e-mail changes by mail (mailed-resets.ts, email-changes.ts): each token written with its
// mail in one transaction, replacing the user's earlier ones of its kind, and spent once.
import { beforeEach, describe, expect, test } from "bun:test";
import type { AccountTokenRecord, OutboxMail, Store, UserRecord } from "../../../src/db/store.ts";
import { clock, event, expectCode, newSession, newUser, tick } from "./fixtures.ts";

const minute = 60_000;

function mail(recipient: string, kind: OutboxMail["kind"], userId: string | null = null): OutboxMail {
  const id = Bun.randomUUIDv7();
  return {
    id,
    kind,
    recipient,
    userId,
    subject: kind,
    textBody: `${kind} body`,
    htmlBody: `<p>${kind}</p>`,
    messageId: `<${id}@example.com>`,
    createdAt: new Date(clock.ms).toISOString(),
  };
}

function token(user: UserRecord, kind: AccountTokenRecord["kind"], email = user.email, ttl = 30 * minute) {
  return {
    digest: `digest-${Bun.randomUUIDv7()}`,
    kind,
    userId: user.id,
    email,
    createdAt: tick(),
    expiresAt: new Date(clock.ms + ttl).toISOString(),
  };
}

export function mailedTokensContract(use: () => Store): void {
  describe("password resets by mail", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });
    const redemption = (user: UserRecord) => {
      const at = tick();
      const refresh = { digest: `refresh-${Bun.randomUUIDv7()}`, expiresAt: new Date(clock.ms + minute).toISOString() };
      return { passwordHash: `hash-${Bun.randomUUIDv7()}`, at, session: newSession(user.id, at), refresh };
    };
    const notice = (user: UserRecord) => mail(user.email, "password_changed", user.id);

    test("a request writes the token, its mail and its event together; a newer one replaces it", async () => {
      const ann = await store.users.create(newUser("ann"));
      const first = token(ann, "password_reset");
      expect(
        await store.mailedResets.request(
          first,
          mail(ann.email, "password_reset", ann.id),
          event("password_reset.requested"),
          true,
        ),
      ).toBe(true);
      expect(await store.mailedResets.find(first.digest, tick())).toEqual(first);
      expect(await store.mail.list({ recipient: ann.email, limit: 5 })).toHaveLength(1);
      const second = token(ann, "password_reset");
      await store.mailedResets.request(
        second,
        mail(ann.email, "password_reset", ann.id),
        event("password_reset.requested"),
        true,
      );
      expect(await store.mailedResets.find(first.digest, tick())).toBe("invalid");
      // Without an account: only the event.
      const none = {
        ...token(ann, "password_reset", "nobody@example.com"),
        userId: "00000000-0000-0000-0000-000000000000",
      };
      const decoy = mail("nobody@example.com", "password_reset");
      expect(await store.mailedResets.request(none, decoy, event("password_reset.requested"), false)).toBe(true);
      expect(await store.audit.list({ action: "password_reset.requested", limit: 10 })).toHaveLength(3);
      expect(await store.mail.list({ limit: 10 })).toHaveLength(2);
      expect(await store.mailedResets.find(none.digest, tick())).toBe("invalid");
      expect(await store.mailedResets.find(second.digest, tick())).toEqual(second);
    });

    test("redeeming sets the password, ends every session, writes the notice, verifies the address", async () => {
      const ann = await store.users.create(newUser("ann"));
      const old = redemption(ann);
      await store.sessions.start(old.session, old.refresh, { tokenVersion: 0 });
      const t = token(ann, "password_reset");
      await store.mailedResets.request(
        t,
        mail("x@example.com", "password_reset"),
        event("password_reset.requested"),
        true,
      );
      const r = redemption(ann);
      const user = await store.mailedResets.redeem(t.digest, r, notice, event("password_reset.redeemed"));
      expect(user).toMatchObject({ passwordHash: r.passwordHash, tokenVersion: 1, emailVerifiedAt: r.at });
      expect((await store.sessions.list(ann.id, r.at)).map((s) => s.id)).toEqual([r.session.id]);
      expect((await store.mail.list({ recipient: ann.email, limit: 5 })).map((m) => m.kind)).toEqual([
        "password_changed",
      ]);
      expect(await store.mailedResets.redeem(t.digest, redemption(ann), notice, event("password_reset.redeemed"))).toBe(
        "invalid",
      );
    });

    test("a token sent to an address the account no longer has is refused, and nothing changes", async () => {
      const ann = await store.users.create(newUser("ann"));
      const t = token(ann, "password_reset", "old@example.com");
      await store.mailedResets.request(
        t,
        mail("x@example.com", "password_reset"),
        event("password_reset.requested"),
        true,
      );
      const before = await store.users.findById(ann.id);
      const user = await store.mailedResets.redeem(t.digest, redemption(ann), notice, event("password_reset.redeemed"));
      expect(user).toBe("invalid");
      expect(await store.users.findById(ann.id)).toEqual(before);
      expect(await store.mail.list({ recipient: ann.email, limit: 5 })).toEqual([]);
    });

    test("expired, other-kind and disabled: refused, and nothing changes", async () => {
      const ann = await store.users.create(newUser("ann"));
      const expired = token(ann, "password_reset", ann.email, -minute);
      await store.mailedResets.request(
        expired,
        mail("x@example.com", "password_reset"),
        event("password_reset.requested"),
        true,
      );
      expect(await store.mailedResets.find(expired.digest, tick())).toBe("expired");
      expect(
        await store.mailedResets.redeem(expired.digest, redemption(ann), notice, event("password_reset.redeemed")),
      ).toBe("expired");
      const change = token(ann, "email_change", "new@example.com");
      await store.emailChanges.request(
        change,
        mail("new@example.com", "email_change"),
        event("email_change.requested"),
      );
      expect(
        await store.mailedResets.redeem(change.digest, redemption(ann), notice, event("password_reset.redeemed")),
      ).toBe("invalid");
      expect((await store.users.findById(ann.id))!.tokenVersion).toBe(0);
    });

    test("of concurrent redemptions of one token exactly one lands, with one notice", async () => {
      const ann = await store.users.create(newUser("ann"));
      const t = token(ann, "password_reset");
      await store.mailedResets.request(
        t,
        mail("x@example.com", "password_reset"),
        event("password_reset.requested"),
        true,
      );
      const results = await Promise.all(
        Array.from({ length: 5 }, () =>
          store.mailedResets.redeem(t.digest, redemption(ann), notice, event("password_reset.redeemed")),
        ),
      );
      expect(results.filter((r) => typeof r === "object")).toHaveLength(1);
      expect((await store.users.findById(ann.id))!.tokenVersion).toBe(1);
      expect(await store.mail.list({ recipient: ann.email, limit: 10 })).toHaveLength(1);
    });
  });

  describe("one live token of a kind per user, whatever runs at once", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });
    // Requests for one user at once: on PostgreSQL, without a lock on the user, each deleted only the
    // tokens committed before it and several stayed live.
    const rounds = 4;
    const together = 4;

    test("concurrent reset requests leave one live reset token", async () => {
      const ann = await store.users.create(newUser("ann"));
      for (let round = 0; round < rounds; round++) {
        const tokens = Array.from({ length: together }, () => token(ann, "password_reset"));
        const written = await Promise.all(
          tokens.map((t) =>
            store.mailedResets.request(
              t,
              mail(ann.email, "password_reset", ann.id),
              event("password_reset.requested"),
              true,
            ),
          ),
        );
        expect(written).toEqual(tokens.map(() => true));
        const live = await Promise.all(tokens.map((t) => store.mailedResets.find(t.digest, tick())));
        expect(live.filter((found) => typeof found === "object")).toHaveLength(1);
      }
    });

    test("concurrent e-mail change requests leave one token that confirms", async () => {
      const ann = await store.users.create(newUser("ann"));
      for (let round = 0; round < rounds; round++) {
        const tokens = Array.from({ length: together }, (_, i) =>
          token(ann, "email_change", `r${round}-${i}@example.com`),
        );
        await Promise.all(
          tokens.map((t) =>
            store.emailChanges.request(t, mail(t.email, "email_change"), event("email_change.requested")),
          ),
        );
        const notice = (before: UserRecord) => mail(before.email, "email_changed", before.id);
        const confirmed = [];
        for (const t of tokens)
          confirmed.push(await store.emailChanges.confirm(t.digest, tick(), notice, event("email_change.confirmed")));
        expect(confirmed.filter((user) => typeof user === "object")).toHaveLength(1);
      }
    });

    test("concurrent verification issues leave one token standing", async () => {
      const ann = await store.users.create(newUser("ann"));
      for (let round = 0; round < rounds; round++) {
        // Expired from the start: redeeming one then answers whether it stands ("expired") or went
        // ("invalid") without spending it, as redeeming a live one would spend them all.
        const tokens = Array.from({ length: together }, () => token(ann, "email_verification", ann.email, -minute));
        await Promise.all(
          tokens.map(({ kind: _kind, ...t }) =>
            store.emailVerifications.issue({
              token: t,
              mail: mail(ann.email, "verify_email", ann.id),
              audit: event("email_verification.sent"),
            }),
          ),
        );
        const found = await Promise.all(
          tokens.map((t) => store.emailVerifications.redeem(t.digest, tick(), event("email_verification.redeemed"))),
        );
        expect(found.filter((answer) => answer === "expired")).toHaveLength(1);
      }
    });
  });

  describe("pruning mailed tokens", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    test("prune forgets expired reset and change tokens only, each of its own kind", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const expiredReset = token(ann, "password_reset", ann.email, -minute);
      const liveReset = token(bob, "password_reset");
      const expiredChange = token(ann, "email_change", "a@example.com", -minute);
      const liveChange = token(bob, "email_change", "b@example.com");
      for (const t of [expiredReset, liveReset])
        await store.mailedResets.request(t, mail(t.email, "password_reset"), event("password_reset.requested"), true);
      for (const t of [expiredChange, liveChange])
        await store.emailChanges.request(t, mail(t.email, "email_change"), event("email_change.requested"));
      const now = tick();
      expect(await store.mailedResets.prune(now, 100)).toBe(1);
      expect(await store.mailedResets.prune(now, 100)).toBe(0);
      expect(await store.mailedResets.find(expiredReset.digest, now)).toBe("invalid");
      expect(await store.mailedResets.find(liveReset.digest, now)).toEqual(liveReset);
      // The change tokens are still there (expired, not yet gone) until their own prune.
      const notice = (before: UserRecord) => mail(before.email, "email_changed", before.id);
      expect(await store.emailChanges.confirm(expiredChange.digest, now, notice, event("email_change.confirmed"))).toBe(
        "expired",
      );
      expect(await store.emailChanges.prune(now, 100)).toBe(1);
      expect(await store.emailChanges.confirm(expiredChange.digest, now, notice, event("email_change.confirmed"))).toBe(
        "invalid",
      );
      expect(
        await store.emailChanges.confirm(liveChange.digest, tick(), notice, event("email_change.confirmed")),
      ).toMatchObject({ email: "b@example.com" });
    });
  });

  describe("e-mail changes by mail", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });
    const notice = (before: UserRecord) => mail(before.email, "email_changed", before.id);

    test("confirming changes the address, verified, spends the token and tells the old address", async () => {
      const ann = await store.users.create(newUser("ann"));
      const t = token(ann, "email_change", "new@example.com", 24 * 60 * minute);
      expect(
        await store.emailChanges.request(
          t,
          mail("new@example.com", "email_change", ann.id),
          event("email_change.requested"),
        ),
      ).toBe(true);
      const at = tick();
      const user = await store.emailChanges.confirm(t.digest, at, notice, event("email_change.confirmed"));
      expect(user).toMatchObject({ email: "new@example.com", emailVerifiedAt: at });
      expect((await store.mail.list({ recipient: "ann@example.com", limit: 5 })).map((m) => m.kind)).toEqual([
        "email_changed",
      ]);
      expect(await store.emailChanges.confirm(t.digest, tick(), notice, event("email_change.confirmed"))).toBe(
        "invalid",
      );
    });

    test("confirming ends the user's reset and verification tokens, which went to the old address", async () => {
      const ann = await store.users.create(newUser("ann"));
      const reset = token(ann, "password_reset");
      await store.mailedResets.request(
        reset,
        mail(ann.email, "password_reset"),
        event("password_reset.requested"),
        true,
      );
      const { kind: _kind, ...verification } = token(ann, "email_verification");
      await store.emailVerifications.issue({
        token: verification,
        mail: mail(ann.email, "verify_email", ann.id),
        audit: event("email_verification.sent"),
      });
      const change = token(ann, "email_change", "new@example.com");
      await store.emailChanges.request(
        change,
        mail("new@example.com", "email_change"),
        event("email_change.requested"),
      );
      expect(
        await store.emailChanges.confirm(change.digest, tick(), notice, event("email_change.confirmed")),
      ).toMatchObject({ email: "new@example.com" });
      expect(await store.mailedResets.find(reset.digest, tick())).toBe("invalid");
      expect(
        await store.emailVerifications.redeem(verification.digest, tick(), event("email_verification.redeemed")),
      ).toBe("invalid");
    });

    test("an address taken meanwhile: email_taken, and nothing changes", async () => {
      const ann = await store.users.create(newUser("ann"));
      const t = token(ann, "email_change", "bob@example.com");
      await store.emailChanges.request(t, mail("bob@example.com", "email_change"), event("email_change.requested"));
      await store.users.create(newUser("bob"));
      await expectCode(
        store.emailChanges.confirm(t.digest, tick(), notice, event("email_change.confirmed")),
        "email_taken",
      );
      expect((await store.users.findById(ann.id))!.email).toBe("ann@example.com");
      expect(await store.mail.list({ recipient: "ann@example.com", limit: 5 })).toEqual([]);
    });

    test("expired, replaced and for a deleted user: refused or not written", async () => {
      const ann = await store.users.create(newUser("ann"));
      const expired = token(ann, "email_change", "x@example.com", -minute);
      await store.emailChanges.request(expired, mail("x@example.com", "email_change"), event("email_change.requested"));
      expect(await store.emailChanges.confirm(expired.digest, tick(), notice, event("email_change.confirmed"))).toBe(
        "expired",
      );
      const newer = token(ann, "email_change", "y@example.com");
      await store.emailChanges.request(newer, mail("y@example.com", "email_change"), event("email_change.requested"));
      expect(await store.emailChanges.confirm(expired.digest, tick(), notice, event("email_change.confirmed"))).toBe(
        "invalid",
      );
      const gone = { ...token(ann, "email_change", "z@example.com"), userId: Bun.randomUUIDv7() };
      expect(
        await store.emailChanges.request(gone, mail("z@example.com", "email_change"), event("email_change.requested")),
      ).toBe(false);
      expect(await store.mail.list({ recipient: "z@example.com", limit: 5 })).toEqual([]);
    });
  });
}
