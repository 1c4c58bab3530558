// What an administrator can do with accounts and read of the audit log, in domain terms. The REST
// routes and the CLI both call this; it knows nothing of HTTP. Who may call it is the callers' check.
import { auditEvent, type Origin } from "../audit/model.ts";
import { newResetCode, resetDigest, canonicalResetCode } from "../auth/reset-codes.ts";
import type {
  AccountChange,
  AuditEvent,
  AuditFilter,
  AuditStore,
  EmailVerificationStore,
  MfaStore,
  PasswordResetStore,
  RecordState,
  Role,
  UserFilter,
  UserRecord,
  UserStore,
} from "../db/store.ts";
import { AppError } from "../errors/index.ts";
import { parseId } from "../lib/ids.ts";
import type { AccountInput, UserService } from "../users/service.ts";

export interface AdminServiceDeps {
  /** Makes accounts under the same rules as sign-up. */
  accounts: Pick<UserService, "create">;
  users: UserStore;
  resets: PasswordResetStore;
  audit: AuditStore;
  verifications: Pick<EmailVerificationStore, "mark">;
  mfa: Pick<MfaStore, "reset">;
  resetCodeTtlSeconds: number;
  now?: () => number;
}

/** A reset code as issued: shown once, to whoever issued it; only its digest is kept. */
export interface IssuedReset {
  reset_code: string;
  expires_at: string;
}

/**
 * An account as an administrator makes it: a sign-up's fields, a role (user when left out), and whether
 * the administrator vouches for its address (else it gets the verification mail, as a sign-up does).
 */
export type NewAccount = AccountInput & { role?: Role; email_verified?: boolean };

/** Who acts: an administrator's id, or null for the operator at the box (the CLI). */
export type AdminActor = string | null;

export type AdminService = ReturnType<typeof createAdminService>;

export const changedMeanwhile = () =>
  new AppError(
    "precondition_failed",
    "The account changed since you read it (If-Match names another version); read it again and retry.",
  );

export function createAdminService({
  accounts,
  users,
  resets,
  audit,
  verifications,
  mfa,
  resetCodeTtlSeconds,
  now = Date.now,
}: AdminServiceDeps) {
  const notFound = () => new AppError("not_found", "No user has this id.");

  async function get(id: string): Promise<UserRecord> {
    const key = parseId(id);
    const user = key && (await users.findById(key));
    if (!user) throw notFound();
    return user;
  }

  return {
    list: (filter: UserFilter): Promise<UserRecord[]> => users.search(filter),
    get,

    /**
     * Makes an account, of any role, whatever SVC_SIGNUP says: held to sign-up's rules, recorded as
     * admin.user.created. Throws `validation_failed`, `username_taken`, `email_taken`.
     */
    create: (
      actor: AdminActor,
      { role = "user", email_verified: emailVerified = false, ...input }: NewAccount,
      origin: Origin,
    ): Promise<UserRecord> =>
      accounts.create(input, origin, { role, actor, action: "admin.user.created", emailVerified }),

    /**
     * Marks the account's address verified on the administrator's word (its outstanding links stop
     * working), recorded as email_verification.marked; an address verified already stays as it was.
     */
    async markEmailVerified(actor: AdminActor, id: string, origin: Origin): Promise<UserRecord> {
      const at = new Date(now()).toISOString();
      const event = auditEvent("email_verification.marked", { actor, target: id, origin }, at);
      const marked = await verifications.mark(id, at, event);
      if (!marked) throw notFound();
      return marked;
    },

    /**
     * Changes the account's role or status. Disabling ends every session and token at once; nothing
     * else is revoked. Throws `last_admin` rather than leave no active admin, `not_found` for no user.
     */
    async update(
      actor: AdminActor,
      id: string,
      change: AccountChange,
      origin: Origin,
      unchanged?: RecordState & Pick<UserRecord, "lastLoginAt">,
    ): Promise<UserRecord> {
      const at = new Date(now()).toISOString();
      const event = auditEvent("admin.user.updated", { actor, target: id, origin, detail: { ...change } }, at);
      const updated = await users.administer(id, change, at, event, unchanged);
      if (!updated) throw notFound();
      if (updated === "changed") throw changedMeanwhile();
      return updated;
    },

    /** Deletes the account as self-deletion does: sessions end, categories stay without a creator. */
    async delete(actor: AdminActor, id: string, origin: Origin): Promise<void> {
      const event = auditEvent("admin.user.deleted", { actor, target: id, origin });
      if (!(await users.delete(id, undefined, event))) throw notFound();
    },

    /** A one-time code the user redeems for a new password; it replaces any code issued before. */
    async issueReset(actor: AdminActor, id: string, origin: Origin): Promise<IssuedReset> {
      const user = await get(id);
      const code = newResetCode();
      const at = now();
      const expiresAt = new Date(at + resetCodeTtlSeconds * 1000).toISOString();
      const issued = await resets.issue(
        {
          digest: resetDigest(canonicalResetCode(code)!),
          userId: user.id,
          createdAt: new Date(at).toISOString(),
          expiresAt,
          issuedBy: actor,
        },
        auditEvent("password_reset.issued", { actor, target: user.id, origin, detail: { expires_at: expiresAt } }),
      );
      if (!issued) throw notFound();
      return { reset_code: code, expires_at: expiresAt };
    },

    /**
     * Clears the account's second factors (the authenticator app, recovery codes, passkeys, and second steps
     * under way), recorded as mfa.reset: the way back in for a user who lost their phone. Its sessions stay.
     */
    async resetFactors(actor: AdminActor, id: string, origin: Origin): Promise<UserRecord> {
      const at = new Date(now()).toISOString();
      const reset = await mfa.reset(id, auditEvent("mfa.reset", { actor, target: id, origin }, at));
      if (!reset) throw notFound();
      return reset;
    },

    events: (filter: AuditFilter): Promise<AuditEvent[]> => audit.list(filter),
  };
}
