// Invitations an administrator issues while sign-up is by invitation: kept as digests, listed newest
// first, revoked by deletion, and spent by the sign-up that redeems one in the same change as its account.
import { and, desc, eq, gt, isNull, lt, or } from "drizzle-orm";
import { parseId } from "../lib/ids.ts";
import { recordIn, type AuditEvent } from "./audit.ts";
import type { Dialect } from "./dialect.ts";
import { INVITATION_FIELDS, USER_FIELDS } from "./records.ts";
import { columns, first, pruneBefore } from "./rows.ts";
import { insertable, userClash, type NewUser, type UserRecord } from "./users.ts";
import { issueIn, type VerificationIssue } from "./email-verifications.ts";
import { linkIn, type NewIdentity } from "./identities.ts";
import { TIMED } from "./transactions.ts";
import type { InvitationRecord } from "./records.ts";

export type { InvitationRecord } from "./records.ts";

/** An invitation to record: unused, with the SHA-256 digest of its code. */
export type NewInvitation = Pick<InvitationRecord, "id" | "email" | "createdBy" | "createdAt" | "expiresAt"> & {
  digest: string;
};

/** Newest first, at most `limit`, older than the invitation `before` names when given. */
export interface InvitationPage {
  limit: number;
  before?: string;
}

/** The audit events of a redemption: the account's creation, and the invitation spent. */
export interface RedemptionEvents {
  created: AuditEvent;
  /** Its targetId is set by the store, to the invitation's id (the code names it, the caller knows only that). */
  redeemed: AuditEvent;
}

export interface InvitationStore {
  /** Records the invitation and its audit event in one change. */
  issue(invitation: NewInvitation, audit: AuditEvent): Promise<InvitationRecord>;
  list(page: InvitationPage): Promise<InvitationRecord[]>;
  /** Deletes the invitation, redeemed or not, with its audit event. null: no invitation has this id. */
  revoke(id: string, audit: AuditEvent): Promise<InvitationRecord | null>;
  /**
   * Creates the user and spends the invitation whose code has this digest, in one change with both audit
   * events: only while that invitation is unused, unexpired at `user.createdAt`, and for no e-mail or for
   * `user.email`. Of concurrent redemptions of one invitation exactly one lands. "invalid": no such
   * invitation (unknown, spent, expired, revoked or for another address), and nothing is written.
   * Throws AppError `username_taken` or `email_taken` as users.create does; the invitation stays unspent.
   * With `verification`, the account's e-mail verification and its mail are written in the same change.
   */
  redeem(
    digest: string,
    user: NewUser,
    events: RedemptionEvents,
    verification?: VerificationIssue,
    identity?: NewIdentity,
  ): Promise<UserRecord | "invalid">;
  /** Forgets up to `limit` invitations expired at `now`, redeemed or not; how many went. */
  prune(now: string, limit: number): Promise<number>;
}

export function invitationStore({ db, run, write, tables, transaction }: Dialect): InvitationStore {
  const { invitations, users } = tables;
  const invitationColumns = columns(invitations, INVITATION_FIELDS);
  const userColumns = columns(users, USER_FIELDS);
  return {
    issue: (invitation, audit) =>
      transaction(async (tx) => {
        const [issued] = await tx.insert(invitations).values(invitation).returning(invitationColumns);
        await recordIn(tx, tables, audit);
        return issued!;
      }, TIMED),
    list: ({ limit, before }) =>
      run(async () => {
        const older = before === undefined ? undefined : parseId(before);
        // An id that cannot be one names no invitation: nothing is older than it.
        if (older === null) return [];
        return db
          .select(invitationColumns)
          .from(invitations)
          .where(older ? lt(invitations.id, older) : undefined)
          .orderBy(desc(invitations.id))
          .limit(limit);
      }),
    revoke(id, audit) {
      const key = parseId(id);
      if (!key) return Promise.resolve(null);
      return transaction(async (tx) => {
        const gone = first(await tx.delete(invitations).where(eq(invitations.id, key)).returning(invitationColumns));
        if (gone) await recordIn(tx, tables, audit);
        return gone;
      }, TIMED);
    },
    redeem: (digest, user, { created, redeemed }, verification, identity) =>
      transaction(
        async (tx) => {
          // The compare-and-set: of concurrent redemptions, the one that marks the invitation used goes on;
          // on PostgreSQL the others wait for its row, then find it used (or unused, if it rolled back).
          const spent = first(
            await tx
              .update(invitations)
              .set({ usedAt: user.createdAt, usedBy: user.id })
              .where(
                and(
                  eq(invitations.digest, digest),
                  isNull(invitations.usedAt),
                  gt(invitations.expiresAt, user.createdAt),
                  or(isNull(invitations.email), eq(invitations.email, user.email)),
                ),
              )
              .returning({ id: invitations.id }),
          );
          if (!spent) return "invalid" as const;
          // A clash here undoes the whole change: the invitation is not spent on an account never made.
          const [made] = await tx.insert(users).values(insertable(user)).returning(userColumns);
          await recordIn(tx, tables, created);
          await recordIn(tx, tables, { ...redeemed, targetId: spent.id });
          if (verification) await issueIn(tx, tables, verification);
          if (identity) await linkIn(tx, tables, identity);
          return made!;
        },
        { timed: true, clash: userClash },
      ),
    prune: (now, limit) => write(() => pruneBefore(db, invitations, invitations.id, invitations.expiresAt, now, limit)),
  };
}
