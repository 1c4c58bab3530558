// The mail outbox: mails enqueued, claimed under a lease by one claimer at a time, settled (sent, due
// again, given up on with its audit event), resent, counted and pruned.
import { beforeEach, describe, expect, test } from "bun:test";
import type { MailKind, OutboxMail, Store } from "../../../src/db/store.ts";
import { clock, event, newUser, tick } from "./fixtures.ts";

/** A mail to `to`, written at the clock's next tick. */
export function newMail(to = "ann@example.com", createdAt = tick(), kind: MailKind = "verify_email"): OutboxMail {
  const id = Bun.randomUUIDv7("hex", Date.parse(createdAt));
  return {
    id,
    kind,
    recipient: to,
    userId: null,
    subject: `Hello ${to}`,
    textBody: "text",
    htmlBody: "<p>html</p>",
    messageId: `<${id}@example.com>`,
    createdAt,
  };
}

const at = (ms: number) => new Date(ms).toISOString();
const MINUTE = 60_000;

export function mailOutboxContract(use: () => Store): void {
  describe("mail outbox", () => {
    let store: Store;
    beforeEach(() => {
      store = use();
    });

    test("enqueued mails are pending, due at once, listed newest first without their claim", async () => {
      const mails = [newMail("a@example.com"), newMail("b@example.com")];
      await store.mail.enqueue(mails);
      expect(await store.mail.pending()).toBe(2);
      const listed = await store.mail.list({ limit: 10 });
      expect(listed.map((m) => m.id)).toEqual([mails[1]!.id, mails[0]!.id]);
      expect(listed[0]).toEqual({
        ...mails[1]!,
        status: "pending",
        attempts: 0,
        nextAttemptAt: mails[1]!.createdAt,
        sentAt: null,
        lastError: null,
      });
      expect("lockedUntil" in listed[0]!).toBe(false);
    });

    test("claim takes due mails once until the lease lapses, oldest due first, at most `limit`", async () => {
      const mails = [newMail(), newMail(), newMail()];
      await store.mail.enqueue(mails);
      const now = tick();
      const lease = at(clock.ms + 5 * MINUTE);
      const first = await store.mail.claim(now, lease, 2);
      expect(first.map((m) => m.id)).toEqual([mails[0]!.id, mails[1]!.id]);
      expect(first[0]!.textBody).toBe("text");
      expect((await store.mail.claim(now, lease, 10)).map((m) => m.id)).toEqual([mails[2]!.id]);
      expect(await store.mail.claim(now, lease, 10)).toEqual([]);
      // The claimer died: once its lease has lapsed the mails are due again.
      const later = at(clock.ms + 5 * MINUTE);
      expect(await store.mail.claim(later, at(clock.ms + 10 * MINUTE), 10)).toHaveLength(3);
    });

    test("a mail not yet due is not claimed", async () => {
      const mail = newMail();
      await store.mail.enqueue(mail);
      const claimed = await store.mail.claim(tick(), at(clock.ms + MINUTE), 1);
      expect(await store.mail.markRetry(claimed[0]!.id, at(clock.ms + 10 * MINUTE), "451 later")).toBe(true);
      expect(await store.mail.claim(at(clock.ms + 9 * MINUTE), at(clock.ms + 20 * MINUTE), 1)).toEqual([]);
      const due = await store.mail.claim(at(clock.ms + 10 * MINUTE), at(clock.ms + 20 * MINUTE), 1);
      expect(due.map((m) => [m.id, m.attempts, m.lastError])).toEqual([[mail.id, 1, "451 later"]]);
    });

    test("two claimers racing for the same rows: each row is claimed once", async () => {
      const mails = Array.from({ length: 40 }, () => newMail());
      await store.mail.enqueue(mails);
      const now = tick();
      const lease = at(clock.ms + MINUTE);
      const claimer = async () => {
        const mine: string[] = [];
        for (;;) {
          const batch = await store.mail.claim(now, lease, 3);
          if (batch.length === 0) return mine;
          mine.push(...batch.map((m) => m.id));
        }
      };
      const [a, b] = await Promise.all([claimer(), claimer()]);
      expect([...a, ...b].sort()).toEqual(mails.map((m) => m.id).sort());
    });

    test("markSent settles a pending mail once; it is no longer pending or claimable", async () => {
      const mail = newMail();
      await store.mail.enqueue(mail);
      const now = tick();
      await store.mail.claim(now, at(clock.ms + MINUTE), 1);
      expect(await store.mail.markSent(mail.id, now)).toBe(true);
      expect(await store.mail.markSent(mail.id, now)).toBe(false);
      expect(await store.mail.markSent("not-an-id", now)).toBe(false);
      expect(await store.mail.pending()).toBe(0);
      expect(await store.mail.claim(at(clock.ms + 2 * MINUTE), at(clock.ms + 3 * MINUTE), 1)).toEqual([]);
      const [sent] = await store.mail.list({ limit: 1, status: "sent" });
      expect(sent).toMatchObject({ id: mail.id, status: "sent", attempts: 1, sentAt: now, lastError: null });
    });

    test("markFailed gives up with its audit event in the same change, once", async () => {
      const mail = newMail();
      await store.mail.enqueue(mail);
      const failed = event("mail.failed", { detail: JSON.stringify({ mail_id: mail.id }) });
      expect(await store.mail.markFailed(mail.id, "550 no such user", failed)).toBe(true);
      expect(await store.mail.markFailed(mail.id, "again", event("mail.failed"))).toBe(false);
      expect(await store.audit.list({ limit: 10 })).toEqual([failed]);
      const [row] = await store.mail.list({ limit: 1 });
      expect(row).toMatchObject({ status: "failed", attempts: 1, lastError: "550 no such user" });
      expect(await store.mail.pending()).toBe(0);
    });

    test("resend puts a failed mail back, due now; unknown ids and mails not failed are told apart", async () => {
      const [failing, waiting] = [newMail(undefined, undefined, "password_changed"), newMail()];
      await store.mail.enqueue([failing, waiting]);
      await store.mail.markFailed(failing.id, "550", event("mail.failed"));
      const now = tick();
      expect(await store.mail.resend(waiting.id, now)).toBe("not_failed");
      expect(await store.mail.resend(Bun.randomUUIDv7(), now)).toBe("missing");
      expect(await store.mail.resend("nonsense", now)).toBe("missing");
      expect(await store.mail.resend(failing.id, now)).toMatchObject({
        id: failing.id,
        status: "pending",
        attempts: 1,
      });
      expect(await store.mail.resend(failing.id, now)).toBe("not_failed");
      const claimed = await store.mail.claim(now, at(clock.ms + MINUTE), 10);
      expect(claimed.map((m) => m.id).sort()).toEqual([failing.id, waiting.id].sort());
      const resent = claimed.find((m) => m.id === failing.id)!;
      expect(resent).toMatchObject({ status: "pending", nextAttemptAt: now, createdAt: now, lastError: "550" });
    });

    test("a sent mail's bodies are blanked; a failed one's only when it carries a link, which cannot be resent", async () => {
      const [sent, notice, ...linked] = [
        newMail(),
        newMail(undefined, undefined, "email_changed"),
        ...(["verify_email", "password_reset", "email_change"] as const).map((kind) =>
          newMail(undefined, undefined, kind),
        ),
      ];
      await store.mail.enqueue([sent!, notice!, ...linked]);
      await store.mail.markSent(sent!.id, tick());
      for (const mail of [notice!, ...linked]) await store.mail.markFailed(mail.id, "550", event("mail.failed"));
      const rows = new Map((await store.mail.page(10)).map((row) => [row.id, row]));
      expect(rows.get(sent!.id)).toMatchObject({ status: "sent", textBody: "", htmlBody: "" });
      expect(rows.get(notice!.id)).toMatchObject({ status: "failed", textBody: "text", htmlBody: "<p>html</p>" });
      for (const mail of linked) {
        expect(rows.get(mail.id)).toMatchObject({ status: "failed", textBody: "", htmlBody: "" });
        expect(await store.mail.resend(mail.id, tick())).toBe("carries_link");
        expect((await store.mail.page(10)).find((row) => row.id === mail.id)?.status).toBe("failed");
      }
    });

    test("a decoy writes its audit event and nothing else: no token, no mail", async () => {
      const before = { mails: await store.mail.page(10), tokens: await store.mail.tokenPage(10) };
      const mail = newMail("nobody@example.com");
      const token = { digest: "z".repeat(43), kind: "email_verification" as const, email: "nobody@example.com" };
      const decoyEvent = event("email_verification.sent");
      await store.mail.decoy({ ...token, createdAt: tick(), expiresAt: at(clock.ms + MINUTE) }, mail, decoyEvent);
      expect({ mails: await store.mail.page(10), tokens: await store.mail.tokenPage(10) }).toEqual(before);
      expect(await store.audit.list({ limit: 10 })).toEqual([decoyEvent]);
    });

    test("prune forgets sent mails older than the cut-off, at most `limit` at a time; pending and failed stay", async () => {
      const sent = [newMail(), newMail(), newMail()];
      const [pending, failed] = [newMail(), newMail()];
      await store.mail.enqueue([...sent, pending, failed]);
      for (const mail of sent) await store.mail.markSent(mail.id, tick());
      await store.mail.markFailed(failed.id, "550", event("mail.failed"));
      const cut = tick();
      const recent = newMail();
      await store.mail.enqueue(recent);
      await store.mail.markSent(recent.id, tick());
      expect(await store.mail.prune(cut, 2)).toBe(2);
      expect(await store.mail.prune(cut, 2)).toBe(1);
      expect(await store.mail.prune(cut, 2)).toBe(0);
      const left = (await store.mail.list({ limit: 10 })).map((m) => m.id).sort();
      expect(left).toEqual([pending.id, failed.id, recent.id].sort());
    });

    test("list filters by status, recipient, user and paging", async () => {
      const user = Bun.randomUUIDv7();
      const mails = [newMail("a@example.com"), { ...newMail("b@example.com"), userId: user }, newMail("a@example.com")];
      await store.mail.enqueue(mails);
      await store.mail.markSent(mails[2]!.id, tick());
      const ids = async (filter: Partial<Parameters<typeof store.mail.list>[0]>) =>
        (await store.mail.list({ limit: 10, ...filter })).map((m) => m.id);
      expect(await ids({ status: "sent" })).toEqual([mails[2]!.id]);
      expect(await ids({ recipient: "A@example.com" })).toEqual([mails[2]!.id, mails[0]!.id]);
      expect(await ids({ userId: user })).toEqual([mails[1]!.id]);
      expect(await ids({ before: mails[1]!.id })).toEqual([mails[0]!.id]);
      expect(await ids({ limit: 1 })).toEqual([mails[2]!.id]);
      expect(await ids({ userId: "nobody" })).toEqual([]);
    });

    test("page reads the outbox and the mails' tokens whole, and load carries them exactly, for copying", async () => {
      const user = newUser("ann");
      const mails = [newMail(), { ...newMail(), userId: user.id }, newMail()];
      await store.mail.enqueue(mails);
      await store.mail.markSent(mails[0]!.id, tick());
      await store.mail.markFailed(mails[2]!.id, "550", event("mail.failed"));
      await store.mail.claim(tick(), at(clock.ms + MINUTE), 10);
      const outbox = [...(await store.mail.page(2)), ...(await store.mail.page(2, mails[1]!.id))];
      expect(outbox.map((m) => m.id)).toEqual(mails.map((m) => m.id));
      expect(await store.mail.page(2, mails[2]!.id)).toEqual([]);
      const tokens = ["b", "a", "c"].map((c) => ({
        digest: c.repeat(64),
        kind: "email_verification" as const,
        userId: user.id,
        email: user.email,
        createdAt: tick(),
        expiresAt: tick(),
      }));
      async function* once<T>(rows: T[]) {
        yield rows;
      }
      await store.load(
        {
          users: once([
            {
              ...newUser("ann"),
              ...user,
              role: "user",
              status: "active",
              tokenVersion: 0,
              updatedAt: user.createdAt,
              lastLoginAt: null,
              emailVerifiedAt: null,
            },
          ]),
          categories: [],
          mail: once(outbox),
          accountTokens: once(tokens),
        },
        { replace: true, expect: { users: 1, categories: 0 } },
      );
      expect(await store.mail.page(10)).toEqual(outbox);
      expect(await store.mail.tokenPage(2)).toEqual([tokens[1]!, tokens[0]!]);
      expect(await store.mail.tokenPage(2, tokens[0]!.digest)).toEqual([tokens[2]!]);
      // The claim made on the source does not come along: the target's sender may send the mail at once.
      expect(await store.mail.claim(tick(), at(clock.ms + MINUTE), 10)).toHaveLength(1);
    });
  });
}
