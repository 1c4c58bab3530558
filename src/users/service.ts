// What can be done with accounts, in domain terms. Knows nothing of HTTP; throws AppError.
import { auditEvent, type AuditAction, type Origin } from "../audit/model.ts";
import type { Awaitable } from "../lib/awaitable.ts";
import { unauthorized } from "../auth/authenticator.ts";
import type { ClientInfo, TokenPair } from "../auth/sessions.ts";
import type { VerifiedToken } from "../auth/tokens.ts";
import type { EmailVerifier } from "../auth/email-verifier.ts";
import { NO_PASSWORD } from "../db/records.ts";
import type {
  AuditEvent,
  NewUser,
  Role,
  UserPage,
  UserPageBefore,
  UserRecord,
  VerificationIssue,
} from "../db/store.ts";
import { AppError, invalidFields } from "../errors/index.ts";
import { newId, parseId } from "../lib/ids.ts";
import { type ChangePasswordInput, type CreateUserInput, type UpdateSelfInput } from "./model.ts";
import { emailProblem, fieldProblems, newPasswordProblems, usernameProblem } from "./rules.ts";
import type { FreshSignIn } from "./fresh-sign-in.ts";
import { createSignIn, type SignInDeps } from "./sign-in.ts";

export { PAGE_DEFAULT, PAGE_MAX, parsePage, parseUserList } from "./paging.ts";

/**
 * The account service needs what signing in does (sign-in.ts), what mails a new account's link, and what
 * judges a session fresh enough to set a first password (fresh-sign-in.ts; without it, none is).
 */
export type UserServiceDeps = SignInDeps & {
  verifier?: Pick<EmailVerifier, "forNewAccount">;
  freshSignIn?: FreshSignIn;
};

export type UserService = ReturnType<typeof createUserService>;

/** What a new account is made of, however it is made (sign-up, an administrator, the CLI). */
export type AccountInput = Pick<CreateUserInput, "username" | "email" | "password">;

export interface AccountOptions {
  role?: Role;
  /** Who acts: an administrator's id, null for the CLI; left out, the new user (signing up). */
  actor?: string | null;
  /** user.created for a sign-up; admin.user.created when an administrator (or the CLI) makes it. */
  action?: Extract<AuditAction, "user.created" | "admin.user.created">;
  /** The address is taken as verified from the start (no mail): the operator's word, or an administrator's. */
  emailVerified?: boolean;
}

export function createUserService(deps: UserServiceDeps) {
  const { users, passwords, sessions, verifier } = deps;
  async function requirePassword(user: UserRecord, password: string | undefined, field: string): Promise<void> {
    if (password === undefined) throw invalidFields([{ field, message: "is required" }]);
    if (!(await passwords.verify(password, user.passwordHash))) {
      throw new AppError("current_password_mismatch", `${field} does not match.`);
    }
  }

  /**
   * An account held to the rules, its password hashed, and the event its creation records, recorded as
   * `actor`'s doing (by default the new user's own: signing up), and the verification mail it is owed
   * (SVC_EMAIL_VERIFICATION); nothing is written yet.
   */
  async function newAccount(
    input: AccountInput,
    origin: Origin,
    { role = "user", actor, action = "user.created", emailVerified = false }: AccountOptions = {},
  ): Promise<{ user: NewUser; event: AuditEvent; verification?: VerificationIssue }> {
    const problems = [
      ...fieldProblems([
        ["username", input.username, usernameProblem],
        ["email", input.email, emailProblem],
      ]),
      ...(await newPasswordProblems("password", input.password)),
    ];
    if (problems.length > 0) throw invalidFields(problems);
    const now = new Date().toISOString();
    const id = newId();
    const event = auditEvent(
      action,
      {
        actor: actor === undefined ? id : actor,
        target: id,
        origin,
        detail: { role, ...(emailVerified && { email_verified: true }) },
      },
      now,
    );
    const user = {
      id,
      username: input.username,
      email: input.email.toLowerCase(),
      passwordHash: await passwords.hash(input.password),
      createdAt: now,
      role,
      emailVerifiedAt: emailVerified ? now : null,
    };
    return { user, event, verification: verifier?.forNewAccount(user, origin, event.actorId) };
  }

  return {
    newAccount,
    /** Throws as a wrong current_password does (a missing one: validation_failed). */
    checkPassword: (user: UserRecord, password: string | undefined) =>
      requirePassword(user, password, "current_password"),
    ...createSignIn(deps),

    /** Creates an account (see newAccount); the CLI and administrators make accounts of any role with `role`. */
    async create(input: AccountInput, origin: Origin, options: AccountOptions = {}): Promise<UserRecord> {
      const { user, event, verification } = await newAccount(input, origin, options);
      return users.create(user, event, verification);
    },

    list(page: UserPage | UserPageBefore): Awaitable<UserRecord[]> {
      return users.list(page);
    },

    count(): Awaitable<number> {
      return users.count();
    },

    async get(id: string): Promise<UserRecord> {
      const canonical = parseId(id);
      const user = canonical ? await users.findById(canonical) : null;
      if (!user) throw new AppError("not_found", "No user has this id.");
      return user;
    },

    /** Updates the caller's record; with `ifUnchanged`, only while it is still the version they read (else 412). */
    async updateSelf(caller: UserRecord, input: UpdateSelfInput, { ifUnchanged = false } = {}): Promise<UserRecord> {
      const problems = fieldProblems([
        ["username", input.username, usernameProblem],
        ["email", input.email, emailProblem],
      ]);
      if (problems.length > 0) throw invalidFields(problems);
      const email = input.email?.toLowerCase();
      const emailChanges = email !== undefined && email !== caller.email;
      if (emailChanges || input.current_password !== undefined) {
        await requirePassword(caller, input.current_password, "current_password");
      }
      const patch = {
        ...(input.username !== undefined && { username: input.username }),
        ...(emailChanges && { email }),
      };
      if (Object.keys(patch).length === 0) return caller;
      const unchanged = ifUnchanged ? caller : undefined;
      const updated = await users.update(caller.id, patch, new Date().toISOString(), caller.tokenVersion, unchanged);
      if (updated) return updated;
      // Refused: the token was revoked meanwhile, or (If-Match) another write came first.
      const now = ifUnchanged ? await users.findById(caller.id) : null;
      if (now && now.tokenVersion === caller.tokenVersion)
        throw new AppError("precondition_failed", "Your record changed since you read it; read it again and retry.");
      throw revokedMeanwhile();
    },

    /**
     * Changes the password; every other session ends with it, and the caller's goes on with a new pair
     * (a token from before sessions gets a new session).
     */
    async changePassword(
      caller: UserRecord,
      token: VerifiedToken,
      input: ChangePasswordInput,
      client: ClientInfo,
    ): Promise<TokenPair> {
      const problems = await newPasswordProblems("new_password", input.new_password);
      if (problems.length > 0) throw invalidFields(problems);
      if (caller.passwordHash !== NO_PASSWORD || input.current_password !== undefined)
        await requirePassword(caller, input.current_password, "current_password");
      else if (!(await deps.freshSignIn?.(caller, token)))
        throw new AppError(
          "recent_sign_in_required",
          "Setting a first password needs a sign-in (or a second factor shown) in this session in the last 5 minutes: sign in again first.",
        );
      const hash = await passwords.hash(input.new_password);
      // The session goes on as it began: a cookie session's new refresh token goes to the cookie.
      const mode = token.mode ?? "json";
      const renewal = token.sessionId === undefined ? undefined : await sessions.renewal(caller, token.sessionId, mode);
      if (renewal === null) throw revokedMeanwhile();
      // Conditional on the caller's token version (and session): of concurrent changes made with one
      // token only the first lands, and the others find their token revoked by it.
      const at = new Date().toISOString();
      const event = auditEvent("password.changed", { actor: caller.id, target: caller.id, origin: client }, at);
      const updated = await users.setPassword(caller.id, hash, at, caller.tokenVersion, renewal?.keep, event);
      if (!updated) throw revokedMeanwhile();
      const pair = renewal ? await renewal.finish(updated) : await sessions.start(updated, client, { mode });
      if (!pair) throw revokedMeanwhile();
      return pair;
    },

    async deleteSelf(caller: UserRecord, origin: Origin): Promise<void> {
      const event = auditEvent("user.deleted", { actor: caller.id, target: caller.id, origin });
      if (!(await users.delete(caller.id, caller.tokenVersion, event))) throw revokedMeanwhile();
    },
  };
}

/**
 * A write on behalf of a token is conditional on the token version it carries: when a password change
 * (or a deletion) landed while the request ran, the token is revoked and the write does not land.
 */
function revokedMeanwhile(): AppError {
  return unauthorized(
    true,
    "The token was revoked while this request ran (the password changed, the session ended, or the account was deleted).",
  );
}
