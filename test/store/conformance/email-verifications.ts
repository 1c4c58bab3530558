// E-mail verification: a token issued with its mail and event in one change (alone, or with the account
// it is for), redeemed once while unexpired and while its address is still the user's, replaced by a
// newer one, and overridden by an administrator's mark.
import { beforeEach, describe, expect, test } from "bun:test";
import type { OutboxMail, Store, UserRecord, VerificationIssue } from "../../../src/db/store.ts";
import { clock, event, newUser, tick } from "./fixtures.ts";
import { failure } from "../../support/failure.ts";

const day = 86_400_000;

/** A mail as the outbox takes it, to `to`, about `userId`. */
export function outboxMail(to: string, userId: string | null, overrides: Partial<OutboxMail> = {}): OutboxMail {
  const id = Bun.randomUUIDv7();
  return {
    id,
    kind: "verify_email",
    recipient: to,
    userId,
    subject: "Confirm your e-mail address",
    textBody: "the link",
    htmlBody: "<p>the link</p>",
    messageId: `<${id}@example.com>`,
    createdAt: tick(),
    ...overrides,
  };
}

/** A verification of the user's address, by the digest given, live for a day unless told otherwise. */
export function verification(
  user: Pick<UserRecord, "id" | "email">,
  digest = `digest-${Bun.randomUUIDv7()}`,
  expiresAt = new Date(clock.ms + day).toISOString(),
): VerificationIssue {
  return {
    token: { digest, userId: user.id, email: user.email, createdAt: tick(), expiresAt },
    mail: outboxMail(user.email, user.id),
    audit: event("email_verification.sent", { targetId: user.id }),
  };
}

export function emailVerificationsContract(use: () => Store): void {
  describe("e-mail verifications", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });
    const redeemed = () => event("email_verification.redeemed");
    async function issued(user: UserRecord, digest?: string, expiresAt?: string) {
      const issue = verification(user, digest, expiresAt);
      expect(await store.emailVerifications.issue(issue)).toBe(true);
      return issue.token.digest;
    }

    test("a new user starts unverified; issuing writes the token's mail and event with it", async () => {
      const ann = await store.users.create(newUser("ann"));
      expect(ann.emailVerifiedAt).toBeNull();
      await issued(ann);
      const mails = await store.mail.list({ userId: ann.id, limit: 10 });
      expect(mails).toHaveLength(1);
      expect(mails[0]).toMatchObject({ recipient: "ann@example.com", kind: "verify_email", status: "pending" });
      expect(await store.audit.list({ action: "email_verification.sent", targetId: ann.id, limit: 10 })).toHaveLength(
        1,
      );
    });

    test("redeeming verifies the address once, spends the token and records the event for the user", async () => {
      const ann = await store.users.create(newUser("ann"));
      const digest = await issued(ann);
      const at = tick();
      const verified = await store.emailVerifications.redeem(digest, at, redeemed());
      expect(verified).toMatchObject({ id: ann.id, emailVerifiedAt: at, updatedAt: at });
      expect((await store.users.findById(ann.id))!.emailVerifiedAt).toBe(at);
      expect(await store.emailVerifications.redeem(digest, tick(), redeemed())).toBe("invalid");
      const events = await store.audit.list({ action: "email_verification.redeemed", limit: 10 });
      expect(events.map((e) => e.targetId)).toEqual([ann.id]);
    });

    test("unknown, replaced, expired and other kinds of tokens are refused and change nothing", async () => {
      const ann = await store.users.create(newUser("ann"));
      const old = await issued(ann, "old");
      const newer = await issued(ann, "newer");
      expect(await store.emailVerifications.redeem("nothing-like-it", tick(), redeemed())).toBe("invalid");
      expect(await store.emailVerifications.redeem(old, tick(), redeemed())).toBe("invalid");
      const bob = await store.users.create(newUser("bob"));
      const short = await issued(bob, "short", new Date(clock.ms + 500).toISOString());
      expect(await store.emailVerifications.redeem(short, tick(), redeemed())).toBe("expired");
      expect(await store.emailVerifications.redeem(short, tick(), redeemed())).toBe("expired");
      expect((await store.users.findById(ann.id))!.emailVerifiedAt).toBeNull();
      expect((await store.users.findById(bob.id))!.emailVerifiedAt).toBeNull();
      expect(await store.audit.list({ action: "email_verification.redeemed", limit: 10 })).toEqual([]);
      expect(typeof (await store.emailVerifications.redeem(newer, tick(), redeemed()))).toBe("object");
    });

    test("a changed address is unverified again; a changed username keeps the verification", async () => {
      const ann = await store.users.create(newUser("ann"));
      const at = tick();
      await store.emailVerifications.mark(ann.id, at, event("email_verification.marked"));
      expect((await store.users.update(ann.id, { username: "anna" }, tick()))!.emailVerifiedAt).toBe(at);
      expect((await store.users.update(ann.id, { email: "anna@example.com" }, tick()))!.emailVerifiedAt).toBeNull();
    });

    test("a token for an address the user no longer has is refused", async () => {
      const ann = await store.users.create(newUser("ann"));
      const digest = await issued(ann);
      await store.users.update(ann.id, { email: "ann2@example.com" }, tick());
      expect(await store.emailVerifications.redeem(digest, tick(), redeemed())).toBe("invalid");
      expect((await store.users.findById(ann.id))!.emailVerifiedAt).toBeNull();
    });

    test("of concurrent redemptions of one token exactly one lands", async () => {
      const ann = await store.users.create(newUser("ann"));
      const digest = await issued(ann);
      const at = tick();
      const results = await Promise.all(
        Array.from({ length: 6 }, () => store.emailVerifications.redeem(digest, at, redeemed())),
      );
      expect(results.filter((r) => typeof r === "object")).toHaveLength(1);
      expect(results.filter((r) => r === "invalid")).toHaveLength(5);
      expect(await store.audit.list({ action: "email_verification.redeemed", limit: 10 })).toHaveLength(1);
    });

    test("an account made with its verification writes user, token, mail and events in one change", async () => {
      const user = newUser("ann");
      const made = await store.users.create(user, event("user.created"), verification(user, "ann-token"));
      expect(await store.mail.list({ userId: made.id, limit: 10 })).toHaveLength(1);
      expect(typeof (await store.emailVerifications.redeem("ann-token", tick(), redeemed()))).toBe("object");
    });

    test("a mail that cannot be written leaves no user, token or event behind", async () => {
      const bob = await store.users.create(newUser("bob"));
      const first = verification(bob);
      await store.emailVerifications.issue(first);
      const ann = newUser("ann");
      // The same mail id again: the outbox refuses the row, and the whole change with it.
      const clashing = {
        ...verification(ann, "ann-token"),
        mail: outboxMail(ann.email, ann.id, { id: first.mail.id }),
      };
      expect(await failure(store.users.create(ann, event("user.created"), clashing))).toBeInstanceOf(Error);
      expect(await store.users.findByLogin("ann")).toBeNull();
      expect(await store.mail.list({ recipient: ann.email, limit: 10 })).toEqual([]);
      expect(await store.audit.list({ action: "user.created", limit: 10 })).toEqual([]);
      expect(await store.emailVerifications.redeem("ann-token", tick(), redeemed())).toBe("invalid");
    });

    test("issuing for a user who is gone is false and writes nothing", async () => {
      const ghost = await store.users.create(newUser("ghost"));
      await store.users.delete(ghost.id);
      expect(await store.emailVerifications.issue(verification(ghost))).toBe(false);
      expect(await store.mail.list({ limit: 10 })).toEqual([]);
    });

    test("an administrator's mark verifies, spends the tokens, and is recorded once", async () => {
      const admin = await store.users.create(newUser("root"));
      const ann = await store.users.create(newUser("ann"));
      const digest = await issued(ann);
      const at = tick();
      const marked = await store.emailVerifications.mark(
        ann.id,
        at,
        event("email_verification.marked", { actorId: admin.id, targetId: ann.id }),
      );
      expect(marked).toMatchObject({ id: ann.id, emailVerifiedAt: at });
      expect(await store.emailVerifications.redeem(digest, tick(), redeemed())).toBe("invalid");
      const again = await store.emailVerifications.mark(ann.id, tick(), event("email_verification.marked"));
      expect(again).toMatchObject({ emailVerifiedAt: at });
      const events = await store.audit.list({ action: "email_verification.marked", limit: 10 });
      expect(events.map((e) => [e.actorId, e.targetId])).toEqual([[admin.id, ann.id]]);
      expect(await store.emailVerifications.mark(Bun.randomUUIDv7(), tick(), event("email_verification.marked"))).toBe(
        null,
      );
      expect(await store.emailVerifications.mark("not-an-id", tick(), event("email_verification.marked"))).toBe(null);
    });

    test("resets.live says whether a reset code is the user's and unexpired, and spends nothing", async () => {
      // Signing in with a reset code checks it before telling an unverified account it is one (sign-in.ts).
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      const expiresAt = new Date(clock.ms + day).toISOString();
      await store.resets.issue(
        { digest: "ann-code", userId: ann.id, createdAt: tick(), expiresAt, issuedBy: null },
        event("password_reset.issued"),
      );
      expect(await store.resets.live("ann-code", ann.id, tick())).toBe(true);
      expect(await store.resets.live("ann-code", ann.id, tick())).toBe(true);
      expect(await store.resets.live("ann-code", bob.id, tick())).toBe(false);
      expect(await store.resets.live("other-code", ann.id, tick())).toBe(false);
      expect(await store.resets.live("ann-code", "not-an-id", tick())).toBe(false);
      expect(await store.resets.live("ann-code", ann.id, expiresAt)).toBe(false);
    });

    test("prune forgets expired verification tokens only", async () => {
      const ann = await store.users.create(newUser("ann"));
      const bob = await store.users.create(newUser("bob"));
      await issued(ann, "old", new Date(clock.ms + 1000).toISOString());
      const live = await issued(bob);
      clock.ms += 5000;
      expect(await store.emailVerifications.prune(new Date(clock.ms).toISOString(), 10)).toBe(1);
      expect(await store.emailVerifications.prune(new Date(clock.ms).toISOString(), 10)).toBe(0);
      expect(typeof (await store.emailVerifications.redeem(live, tick(), redeemed()))).toBe("object");
    });
  });
}
