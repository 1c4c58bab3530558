// What can be done with accounts, in domain terms. Knows nothing of HTTP; throws AppError.
import { auditEvent, type AuditAction, type Origin } from "../audit/model.ts";
import type { Awaitable } from "../awaitable.ts";
import { isCommonPassword } from "../auth/common-passwords.ts";
import { canonicalResetCode, resetDigest } from "../auth/reset-codes.ts";
import { setBounded } from "../bounded-map.ts";
import { unauthorized } from "../auth/authenticator.ts";
import type { PasswordHasher } from "../auth/passwords.ts";
import type { LoginThrottle } from "../auth/throttle.ts";
import type { ClientInfo, SessionService, TokenPair } from "../auth/sessions.ts";
import type { VerifiedToken } from "../auth/tokens.ts";
import {
  nameKey,
  type AuditEvent,
  type AuditStore,
  type NewUser,
  type PasswordResetStore,
  type Role,
  type UserPage,
  type UserRecord,
  type UserStore,
} from "../db/store.ts";
import type { Logger } from "../log.ts";
import { AppError, invalidFields, UNKNOWN_FIELD, type FieldError } from "../errors.ts";
import { newId, parseId } from "../ids.ts";
import {
  userView,
  type ChangePasswordInput,
  type CreateUserInput,
  type LoginInput,
  type RedeemResetInput,
  type UpdateSelfInput,
  type UserView,
} from "./model.ts";
import { emailProblem, fieldProblems, passwordProblem, usernameProblem } from "./rules.ts";
import { limitKey } from "../http/client-address.ts";

export interface UserServiceDeps {
  users: UserStore;
  resets: PasswordResetStore;
  audit: AuditStore;
  passwords: PasswordHasher;
  sessions: SessionService;
  throttle: LoginThrottle;
  logger: Logger;
}

/** How many accounts' running blocks are remembered, so that each block is recorded once per instance. */
const THROTTLED_NOTED = 10_000;

export const PAGE_DEFAULT = 100;
export const PAGE_MAX = 1000;

export type UserService = ReturnType<typeof createUserService>;

/** What a new account is made of, however it is made (sign-up, an administrator, the CLI). */
export type AccountInput = Pick<CreateUserInput, "username" | "email" | "password">;

export interface AccountOptions {
  role?: Role;
  /** Who acts: an administrator's id, null for the CLI; left out, the new user (signing up). */
  actor?: string | null;
  /** user.created for a sign-up; admin.user.created when an administrator (or the CLI) makes it. */
  action?: Extract<AuditAction, "user.created" | "admin.user.created">;
}

export function createUserService({ users, resets, audit, passwords, sessions, throttle, logger }: UserServiceDeps) {
  /**
   * Records an event that goes with no change (a refused login). Its write failing (a full disk) must
   * not change the answer, so the event goes to the log instead.
   */
  async function note(event: AuditEvent): Promise<void> {
    try {
      await audit.record(event);
    } catch (error) {
      logger.warn({ err: error, audit: event }, "audit event not recorded");
    }
  }

  /** Until when each account's current block has been recorded: a block is one event, not one per request. */
  const throttledUntil = new Map<string, number>();
  /** Reserves a login attempt; a refusal is recorded once per block. */
  async function reserve(
    action: AuditAction,
    account: string,
    clientKey: string,
    target: string | null,
    origin: Origin,
  ) {
    try {
      return await throttle.reserve(account, clientKey);
    } catch (error) {
      const retryAfter =
        error instanceof AppError && error.code === "too_many_requests" && error.headers?.["retry-after"];
      const now = Date.now();
      if (retryAfter && (throttledUntil.get(account) ?? 0) <= now) {
        setBounded(throttledUntil, account, now + Number(retryAfter) * 1000, THROTTLED_NOTED);
        await note(auditEvent(action, { target, origin, failed: true, detail: { retry_after_s: Number(retryAfter) } }));
      }
      throw error;
    }
  }

  const disabled = () => new AppError("account_disabled", "This account is disabled; an administrator can enable it.");

  async function requirePassword(user: UserRecord, password: string | undefined, field: string): Promise<void> {
    if (password === undefined) throw invalidFields([{ field, message: "is required" }]);
    if (!(await passwords.verify(password, user.passwordHash))) {
      throw new AppError("current_password_mismatch", `${field} does not match.`);
    }
  }

  /** The rules' problems, plus a common password; the list is only consulted for an otherwise valid one. */
  async function newPasswordProblems(field: string, password: string): Promise<FieldError[]> {
    const problems = fieldProblems([[field, password, passwordProblem]]);
    if (problems.length === 0 && (await isCommonPassword(password))) {
      problems.push({ field, message: "is too common: it appears in lists of breached passwords" });
    }
    return problems;
  }

  /**
   * An account held to the rules, its password hashed, and the event its creation records, recorded as
   * `actor`'s doing (by default the new user's own: signing up); nothing is written yet.
   */
  async function newAccount(
    input: AccountInput,
    origin: Origin,
    { role = "user", actor, action = "user.created" }: AccountOptions = {},
  ): Promise<{ user: NewUser; event: AuditEvent }> {
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
      { actor: actor === undefined ? id : actor, target: id, origin, detail: { role } },
      now,
    );
    const user = {
      id,
      username: input.username,
      email: input.email.toLowerCase(),
      passwordHash: await passwords.hash(input.password),
      createdAt: now,
      role,
    };
    return { user, event };
  }

  return {
    newAccount,

    /** Creates an account (see newAccount); the CLI and administrators make accounts of any role with `role`. */
    async create(input: AccountInput, origin: Origin, options: AccountOptions = {}): Promise<UserRecord> {
      const { user, event } = await newAccount(input, origin, options);
      return users.create(user, event);
    },

    /** Checks the password and starts a session; `client.address` also keys the per-client failure limit. */
    async login({ username, password, mode }: LoginInput, client: ClientInfo): Promise<TokenPair & { user: UserView }> {
      const user = await users.findByLogin(username);
      // Unknown names are throttled like accounts, so a block does not reveal who exists either.
      const account = user ? `user:${user.id}` : `login:${nameKey(username)}`;
      const clientKey = `client:${limitKey(client.address)}`;
      // Counted as a failure from here on unless it succeeds: a burst cannot get more guesses checked.
      using attempt = await reserve("login.throttled", account, clientKey, user?.id ?? null, client);
      // An unknown user still costs one argon2id verify, so timing does not reveal who exists.
      const ok = user ? await passwords.verify(password, user.passwordHash) : await passwords.verifyNothing(password);
      const refused = (reason: string) =>
        note(
          auditEvent("login.failed", { target: user?.id ?? null, origin: client, failed: true, detail: { reason } }),
        );
      if (!user || !ok) {
        await refused(user ? "wrong_password" : "unknown_account");
        throw new AppError("invalid_credentials", "Username or password is incorrect.");
      }
      await attempt.succeeded();
      // Only the right password learns that the account is disabled: a guess gets the ordinary 401.
      if (user.status !== "active") {
        await refused("account_disabled");
        throw disabled();
      }
      const started = await sessions.start(user, client, { login: true, ...(mode && { mode }) });
      if (!started) {
        // Changed while its password was checked: disabled, or deleted (as unknown as any missing account).
        if ((await users.findById(user.id))?.status === "disabled") throw disabled();
        throw new AppError("invalid_credentials", "Username or password is incorrect.");
      }
      return { ...started, user: userView(user, user.id) };
    },

    list(page: UserPage): Awaitable<UserRecord[]> {
      return users.list(page);
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
      await requirePassword(caller, input.current_password, "current_password");
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

    /**
     * Redeems a reset code an administrator issued: sets the new password, ends every earlier session
     * and starts one (answered as a login). Attempts are throttled as logins are, under their own key.
     */
    async redeemReset(input: RedeemResetInput, client: ClientInfo): Promise<TokenPair & { user: UserView }> {
      const problems = await newPasswordProblems("new_password", input.new_password);
      if (problems.length > 0) throw invalidFields(problems);
      const user = await users.findByLogin(input.username);
      const account = `reset:${user ? user.id : nameKey(input.username)}`;
      const clientKey = `client:${limitKey(client.address)}`;
      using attempt = await reserve("password_reset.throttled", account, clientKey, user?.id ?? null, client);
      const refused = (reason: string) =>
        note(
          auditEvent("password_reset.failed", {
            target: user?.id ?? null,
            origin: client,
            failed: true,
            detail: { reason },
          }),
        );
      const invalid = async (reason: "unknown_account" | "malformed_code" | "invalid_code") => {
        await refused(reason);
        return new AppError(
          "invalid_reset_code",
          "The reset code is wrong, expired or already used; ask for a new one.",
        );
      };
      const code = canonicalResetCode(input.reset_code);
      if (!user) throw await invalid("unknown_account");
      if (!code) throw await invalid("malformed_code");
      const prepared = sessions.prepare(user, client, input.mode ?? "json");
      const at = prepared.session.createdAt;
      const result = await resets.redeem(
        resetDigest(code),
        user.id,
        {
          passwordHash: await passwords.hash(input.new_password),
          at,
          session: prepared.session,
          refresh: prepared.refresh,
        },
        auditEvent("password_reset.redeemed", { actor: user.id, target: user.id, origin: client }, at),
      );
      // Wrong, spent, replaced or expired: the store keeps only the live code's digest, so they look alike.
      if (result === "invalid") throw await invalid("invalid_code");
      await attempt.succeeded();
      if (result === "disabled") {
        await refused("account_disabled");
        throw disabled();
      }
      return { ...(await prepared.pair(result)), user: userView(result, result.id) };
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

const PAGE_PARAMETERS = new Set(["limit", "after"]);

/** Reads `limit` and `after` from a query string: limit 1-1000 (default 100), after a user id; nothing else. */
export function parsePage(query: Record<string, string | undefined>): UserPage {
  let unknown: string[] | undefined;
  for (const name in query) if (!PAGE_PARAMETERS.has(name)) (unknown ??= []).push(name);
  if (unknown) throw invalidFields(unknown.map((field) => ({ field, message: UNKNOWN_FIELD })));
  const { limit, after } = query;
  const problems: FieldError[] = [];
  let size = PAGE_DEFAULT;
  if (limit !== undefined) {
    size = /^\d{1,4}$/.test(limit) ? Number(limit) : NaN;
    if (!(size >= 1 && size <= PAGE_MAX))
      problems.push({ field: "limit", message: `must be an integer from 1 to ${PAGE_MAX}` });
  }
  const afterId = after === undefined ? undefined : parseId(after);
  if (afterId === null) problems.push({ field: "after", message: "must be a user id" });
  if (problems.length > 0 || afterId === null) throw invalidFields(problems);
  return afterId === undefined ? { limit: size } : { limit: size, after: afterId };
}
